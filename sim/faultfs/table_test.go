package faultfs_test

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/sim/faultfs"
	"github.com/lakestate/lakestate/table"
)

const tableDir = "/data/tbl"

func tableSchema() table.Schema {
	return table.Schema{
		Fields:      []table.Field{{Name: "k", Type: table.String()}, {Name: "v", Type: table.BigInt()}},
		PrimaryKeys: []string{"k"},
		Options:     map[string]string{table.OptionBucket: "2"},
		TimeMillis:  1700000000000,
	}
}

func batch(t *testing.T, tbl *table.Table, rows map[string]int64) arrow.Record {
	t.Helper()
	s, err := tbl.Schema().ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	}) {
		b.Field(0).(*array.StringBuilder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(rows[k])
	}
	return b.NewRecord()
}

func commit(tbl *table.Table, t *testing.T, id int64, rows map[string]int64) error {
	rec := batch(t, tbl, rows)
	defer rec.Release()
	_, err := tbl.WriteAndCommit(rec, nil, table.CommitInfo{User: "sim", Identifier: id, TimeMillis: 1700000000000 + id})
	return err
}

// readAll returns the latest snapshot's id and its rows as sorted "k=v"
// strings. It reads the live data files themselves and keeps the newest
// sequence number of each key, because level-0 files of a deletion-vector
// table stay invisible to views until compaction.
func readAll(t *testing.T, tbl *table.Table) (int64, []string) {
	t.Helper()
	id, ok, err := tbl.LatestSnapshotID()
	if err != nil || !ok {
		t.Fatalf("latest snapshot: ok=%v err=%v", ok, err)
	}
	if err := table.CheckTable(tbl, id); err != nil {
		t.Fatalf("check snapshot %d: %v", id, err)
	}
	files, _, err := tbl.LiveFiles(id)
	if err != nil {
		t.Fatal(err)
	}
	type version struct {
		v, seq int64
		kind   table.ValueKind
	}
	latest := map[string]version{}
	for _, f := range files {
		dir, err := tbl.BucketDir(f.Partition, f.Bucket)
		if err != nil {
			t.Fatal(err)
		}
		df, err := table.OpenDataFile(tbl.FileIO(), path.Join(dir, f.File.FileName), tbl.Schema())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := df.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		k, val := rows.Rows.Column(0).(*array.String), rows.Rows.Column(1).(*array.Int64)
		for i := range int(rows.Rows.NumRows()) {
			if old, ok := latest[k.Value(i)]; !ok || rows.Seqs[i] > old.seq {
				latest[k.Value(i)] = version{val.Value(i), rows.Seqs[i], rows.Kinds[i]}
			}
		}
		rows.Release()
		df.Close()
	}
	var out []string
	for k, v := range latest {
		if v.kind != table.KindDelete {
			out = append(out, fmt.Sprintf("%s=%d", k, v.v))
		}
	}
	slices.Sort(out)
	return id, out
}

// TestTableSurvivesCrashAfterFailedCommit commits two batches, fails a
// third with fsync errors, crashes, and checks that the reopened table reads
// back the second snapshot, for many seeds of the crash.
func TestTableSurvivesCrashAfterFailedCommit(t *testing.T) {
	for seed := uint64(0); seed < 16; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			fsys := faultfs.New(rand.New(rand.NewPCG(seed, 1)), faultfs.Faults{})
			opt := table.WithRand(rand.NewChaCha8([32]byte{byte(seed)}))
			tbl, err := table.Create(fsys, tableDir, tableSchema(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := commit(tbl, t, 1, map[string]int64{"a": 1, "b": 2, "c": 3}); err != nil {
				t.Fatal(err)
			}
			if err := commit(tbl, t, 2, map[string]int64{"b": 20, "d": 4}); err != nil {
				t.Fatal(err)
			}
			fsys.SetFaults(faultfs.Faults{SyncFailure: 1})
			if err := commit(tbl, t, 3, map[string]int64{"a": 100, "e": 5}); err == nil {
				t.Fatal("commit succeeded although every fsync failed")
			}
			fsys.Crash()
			fsys.SetFaults(faultfs.Faults{})

			reopened, err := table.Open(fsys, tableDir, opt)
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			id, rows := readAll(t, reopened)
			want := []string{"a=1", "b=20", "c=3", "d=4"}
			if id != 2 || !slices.Equal(rows, want) {
				t.Fatalf("after crash: snapshot %d rows %v, want snapshot 2 rows %v", id, rows, want)
			}
			if err := commit(reopened, t, 3, map[string]int64{"a": 100, "e": 5}); err != nil {
				t.Fatalf("commit after recovery: %v", err)
			}
			if _, rows := readAll(t, reopened); !slices.Equal(rows, []string{"a=100", "b=20", "c=3", "d=4", "e=5"}) {
				t.Fatalf("after recovery commit: %v", rows)
			}
		})
	}
}
