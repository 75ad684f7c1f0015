package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestCheckTableFixtures(t *testing.T) {
	for _, name := range []string{"pk-dv-parquet", "pk-mor-parquet"} {
		tb, err := Open(NewLocalFileIO(), fixtureDir(t, name))
		if err != nil {
			t.Fatal(err)
		}
		latest, _, err := tb.LatestSnapshotID()
		if err != nil {
			t.Fatal(err)
		}
		for id := int64(1); id <= latest; id++ {
			if err := CheckTable(tb, id); err != nil {
				t.Errorf("%s snapshot %d: %v", name, id, err)
			}
		}
	}
}

// kvTable creates a deletion-vector table k INT (primary key), v STRING
// with one bucket.
func kvTable(t *testing.T) *Table {
	t.Helper()
	tb, err := Create(NewLocalFileIO(), filepath.Join(t.TempDir(), "kv"), Schema{
		Fields:      []Field{{Name: "k", Type: Int().NotNull()}, {Name: "v", Type: String()}},
		PrimaryKeys: []string{"k"},
		Options:     map[string]string{OptionBucket: "1", OptionDeletionVectors: "true"},
	}, WithRand(rand.NewChaCha8([32]byte{1})))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// appendKV writes rows as a level-0 file at the given level and commits it
// as an APPEND.
func appendKV(t *testing.T, tb *Table, level int32, seq int64, id int64, rows map[int32]string, deletes ...int32) {
	t.Helper()
	keys := make([]int32, 0, len(rows)+len(deletes))
	for k := range rows {
		keys = append(keys, k)
	}
	keys = append(keys, deletes...)
	slices.Sort(keys)
	sch, _ := tb.Schema().ArrowSchema()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	var seqs []int64
	var kinds []ValueKind
	for _, k := range keys {
		rb.Field(0).(*array.Int32Builder).Append(k)
		if v, ok := rows[k]; ok {
			rb.Field(1).(*array.StringBuilder).Append(v)
			kinds = append(kinds, KindInsert)
		} else {
			rb.Field(1).(*array.StringBuilder).AppendNull()
			kinds = append(kinds, KindDelete)
		}
		seqs = append(seqs, seq)
		seq++
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	dir, err := tb.BucketDir(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := WriteDataFile(tb.FileIO(), filepath.Join(dir, tb.NewDataFileName()), tb.Schema(), rec, seqs, kinds, DataFileOptions{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.CommitAppend([]ManifestEntry{{Kind: FileAdd, File: meta}}, CommitInfo{User: "writer", Identifier: id}); err != nil {
		t.Fatal(err)
	}
}

// Barrier rounds through the table's own commit path: each round's COMPACT
// snapshot passes CheckTable, and a read of it returns the model.
func TestCompactRoundsCommitted(t *testing.T) {
	tb := kvTable(t)
	s := tb.Schema()
	o, err := CompactionOptionsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	dir, _ := tb.BucketDir(nil, 0)
	files, err := NewDataBucketFiles(tb.FileIO(), dir, s, BucketFilesOptions{TargetFileSize: o.TargetFileSize, NewFileName: tb.NewDataFileName})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	model := map[int32]string{}
	seq := int64(0)
	for round := int64(1); round <= 6; round++ {
		rows, dels := map[int32]string{}, []int32{}
		for range 20 {
			k := int32(rng.IntN(40))
			if _, dup := rows[k]; dup || slices.Contains(dels, k) {
				continue
			}
			if rng.IntN(4) == 0 {
				dels = append(dels, k)
				delete(model, k)
			} else {
				rows[k] = fmt.Sprintf("v%d-%d", k, round)
				model[k] = rows[k]
			}
		}
		appendKV(t, tb, 0, seq, round, rows, dels...)
		seq += int64(len(rows) + len(dels))

		snap, _, _ := tb.LatestSnapshotID()
		entries, index, err := tb.LiveFiles(snap)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewLevelsFromEntries(cmp, entries, o.NumLevels)
		if err != nil {
			t.Fatal(err)
		}
		dvs := DeletionVectors{}
		for _, e := range index {
			if dvs, err = tb.ReadDeletionVectors(e); err != nil {
				t.Fatal(err)
			}
		}
		unit, ok := o.Universal().PickLevel0(l.NumLevels(), l.SortedRuns())
		if !ok {
			t.Fatal("no level-0 run to pick")
		}
		res, err := Compact(PlanCompaction(cmp, unit, l, o), l, dvs, files)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := tb.CommitCompact(res.Change(nil, 0), CommitInfo{User: "compactor", Identifier: round})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := CheckTable(tb, cr.SnapshotID); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := scanKV(t, tb, cr.SnapshotID); !mapsEqual(got, model) {
			t.Fatalf("round %d: read %v\nmodel %v", round, got, model)
		}
	}
}

func scanKV(t *testing.T, tb *Table, snap int64) map[int32]string {
	t.Helper()
	entries, index, err := tb.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLevelsFromEntries(NewKeyComparator([]DataType{Int().NotNull()}), entries, 6)
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{}
	for _, e := range index {
		if dvs, err = tb.ReadDeletionVectors(e); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ := tb.BucketDir(nil, 0)
	files, err := NewDataBucketFiles(tb.FileIO(), dir, tb.Schema(), BucketFilesOptions{TargetFileSize: 1, NewFileName: tb.NewDataFileName})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]string{}
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			it, err := files.Open(f, dvs[f.FileName])
			if err != nil {
				t.Fatal(err)
			}
			rows := it.(*dataFileRows)
			for rows.Next() {
				out[rows.int32At(0)] = rows.stringAt(1)
			}
			rows.Close()
		}
	}
	return out
}

func mapsEqual(a, b map[int32]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestCheckTableFindsDuplicateKeys(t *testing.T) {
	tb := kvTable(t)
	appendKV(t, tb, 5, 0, 1, map[int32]string{1: "old", 2: "b"})
	appendKV(t, tb, 4, 10, 2, map[int32]string{1: "new"})
	snap, _, _ := tb.LatestSnapshotID()
	err := CheckTable(tb, snap)
	if err == nil || !strings.Contains(err.Error(), "is visible in") {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("snapshot %d", snap))) {
		t.Fatalf("error does not name the snapshot: %v", err)
	}
}
