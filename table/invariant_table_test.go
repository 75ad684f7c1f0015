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
