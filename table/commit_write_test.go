package table

import (
	"path"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

type writeTestRow struct {
	kg int32
	k  string
	v  int64
}

func writeTestRecord(t *testing.T, tbl *Table, rows []writeTestRow) arrow.Record {
	t.Helper()
	schema, err := tbl.Schema().ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int32Builder).Append(r.kg)
		b.Field(1).(*array.StringBuilder).Append(r.k)
		b.Field(2).(*array.Int64Builder).Append(r.v)
	}
	return b.NewRecord()
}

// readBack reads every live file of a snapshot: bucket -> rows in file
// order as (kg, k, v, seq, kind).
func readBack(t *testing.T, tbl *Table, snap int64) map[int32][]string {
	t.Helper()
	files, _, err := tbl.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]string{}
	for _, f := range files {
		dir, _ := tbl.BucketDir(f.Partition, f.Bucket)
		df, err := OpenDataFile(tbl.fio, path.Join(dir, f.File.FileName), tbl.Schema())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := df.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		kg := rows.Rows.Column(0).(*array.Int32)
		k := rows.Rows.Column(1).(*array.String)
		v := rows.Rows.Column(2).(*array.Int64)
		for i := 0; i < int(rows.Rows.NumRows()); i++ {
			out[f.Bucket] = append(out[f.Bucket], fmtRow(kg.Value(i), k.Value(i), v.Value(i), rows.Seqs[i], rows.Kinds[i], f.File.Level))
		}
		rows.Release()
		df.Close()
	}
	return out
}

func fmtRow(kg int32, k string, v, seq int64, kind ValueKind, level int32) string {
	return itoa(int64(kg)) + "/" + k + "=" + itoa(v) + " seq" + itoa(seq) + " kind" + itoa(int64(kind)) + " L" + itoa(int64(level))
}

func TestWriteAndCommitSortsDedupsAndBuckets(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	rows := []writeTestRow{{1, "b", 1}, {1, "a", 2}, {2, "a", 3}, {1, "b", 4}, {3, "z", 5}, {1, "a", 6}, {2, "c", 7}}
	rec := writeTestRecord(t, tbl, rows)
	defer rec.Release()
	kinds := []ValueKind{KindInsert, KindInsert, KindInsert, KindUpdateAfter, KindInsert, KindDelete, KindInsert}
	r, err := tbl.WriteAndCommit(rec, kinds, commitInfo("w", 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.SnapshotID != 1 || len(r.Added) == 0 {
		t.Fatalf("result %+v", r)
	}
	// Expected: the last row per key, grouped by the bucket Paimon assigns.
	want := map[int32][]string{}
	last := map[[2]any]int{}
	for i, row := range rows {
		last[[2]any{row.kg, row.k}] = i
	}
	type kept struct {
		row  writeTestRow
		kind ValueKind
	}
	perBucket := map[int32][]kept{}
	for key, i := range last {
		_ = key
		b := int32(Bucket(commitTestKey(rows[i].kg, rows[i].k), 2))
		perBucket[b] = append(perBucket[b], kept{rows[i], kinds[i]})
	}
	for b, ks := range perBucket {
		sort.Slice(ks, func(i, j int) bool {
			if ks[i].row.kg != ks[j].row.kg {
				return ks[i].row.kg < ks[j].row.kg
			}
			return ks[i].row.k < ks[j].row.k
		})
		for seq, k := range ks {
			want[b] = append(want[b], fmtRow(k.row.kg, k.row.k, k.row.v, int64(seq), k.kind, 0))
		}
	}
	got := readBack(t, tbl, 1)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n%v\nwant\n%v", got, want)
	}
	for _, e := range r.Added {
		if e.File.Level != 0 || *e.File.FileSource != SourceAppend || *e.File.CreationTimeMs != 1700000000001 || e.TotalBuckets != 2 {
			t.Fatalf("entry %+v", e.File)
		}
		if e.File.DeleteRowCount == nil {
			t.Fatal("no delete row count")
		}
	}

	// A retried batch is neither written nor committed.
	files := tableFiles(t, tbl)
	again, err := tbl.WriteAndCommit(rec, kinds, commitInfo("w", 1))
	if err != nil || !again.Skipped || again.SnapshotID != 1 {
		t.Fatalf("retry %+v %v", again, err)
	}
	if !reflect.DeepEqual(tableFiles(t, tbl), files) {
		t.Fatal("a skipped batch wrote files")
	}

	// The next batch continues each bucket's sequence numbers.
	batch2 := []writeTestRow{{2, "a", 30}, {1, "b", 40}}
	rec2 := writeTestRecord(t, tbl, batch2)
	defer rec2.Release()
	if _, err := tbl.WriteAndCommit(rec2, nil, commitInfo("w", 2)); err != nil {
		t.Fatal(err)
	}
	next := map[int32]int64{}
	for b, ks := range perBucket {
		next[b] = int64(len(ks))
	}
	wantNew := map[string]bool{}
	for _, row := range []writeTestRow{{1, "b", 40}, {2, "a", 30}} { // key order
		b := int32(Bucket(commitTestKey(row.kg, row.k), 2))
		wantNew[fmtRow(row.kg, row.k, row.v, next[b], KindInsert, 0)] = true
		next[b]++
	}
	for _, lines := range readBack(t, tbl, 2) {
		for _, l := range lines {
			delete(wantNew, l)
		}
	}
	if len(wantNew) != 0 {
		t.Fatalf("rows of the second batch missing or with other sequence numbers: %v", wantNew)
	}
	// An empty batch commits nothing.
	empty := writeTestRecord(t, tbl, nil)
	defer empty.Release()
	if r, err := tbl.WriteAndCommit(empty, nil, commitInfo("w", 3)); err != nil || r.SnapshotID != 2 {
		t.Fatalf("empty batch %+v %v", r, err)
	}
}
