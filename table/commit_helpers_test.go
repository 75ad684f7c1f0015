package table

import (
	"math/rand/v2"
	"path"
	"testing"
)

// A test table: PK (kg INT, k STRING), value v BIGINT, two buckets.
func commitTestSchema(opts map[string]string) Schema {
	o := map[string]string{OptionBucket: "2"}
	for k, v := range opts {
		o[k] = v
	}
	return Schema{
		Fields:      []Field{{Name: "kg", Type: Int()}, {Name: "k", Type: String()}, {Name: "v", Type: BigInt()}},
		PrimaryKeys: []string{"kg", "k"},
		Options:     o,
		TimeMillis:  1700000000000,
	}
}

func newCommitTestTable(t testing.TB, opts map[string]string) *Table {
	t.Helper()
	tbl, err := Create(NewLocalFileIO(), t.TempDir(), commitTestSchema(opts), WithRand(rand.NewChaCha8([32]byte{1})))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func commitTestKey(kg int32, k string) []byte {
	return EncodeBinaryRow([]DataType{Int().NotNull(), String().NotNull()}, []Datum{IntDatum(int64(kg)), BytesDatum([]byte(k))})
}

// commitTestFile makes the entry of a data file whose bytes are a stand-in:
// the commit path only needs its directory entry to exist.
func commitTestFile(t testing.TB, tbl *Table, bucket, level int32, lo, hi string, rows int64) ManifestEntry {
	t.Helper()
	name := tbl.NewDataFileName()
	dir, err := tbl.BucketDir(EmptyBinaryRow(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileSynced(tbl.fio, path.Join(dir, name), []byte("stand-in")); err != nil {
		t.Fatal(err)
	}
	created := int64(1700000000000)
	src := SourceAppend
	return ManifestEntry{
		Kind: FileAdd, Bucket: bucket,
		File: DataFileMeta{
			FileName: name, FileSize: 8, RowCount: rows,
			MinKey: commitTestKey(0, lo), MaxKey: commitTestKey(0, hi),
			KeyStats:   SimpleStats{MinValues: commitTestKey(0, lo), MaxValues: commitTestKey(0, hi), NullCounts: []*int64{metaI64(0), metaI64(0)}},
			ValueStats: SimpleStats{MinValues: EmptyBinaryRow(), MaxValues: EmptyBinaryRow(), NullCounts: []*int64{}},
			Level:      level, ExtraFiles: []string{}, CreationTimeMs: &created, DeleteRowCount: metaI64(0), FileSource: &src,
		},
	}
}

// upgraded returns the ADD entry of e moved to level.
func upgraded(e ManifestEntry, level int32) ManifestEntry {
	src := SourceCompact
	e.File.Level, e.File.FileSource = level, &src
	return e
}

func commitInfo(user string, id int64) CommitInfo {
	return CommitInfo{User: user, Identifier: id, TimeMillis: 1700000000000 + id}
}

func liveNames(t testing.TB, tbl *Table, snap int64) map[string]int32 {
	t.Helper()
	files, _, err := tbl.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, f := range files {
		if _, dup := out[f.File.FileName]; dup {
			t.Fatalf("snapshot %d lists %s twice", snap, f.File.FileName)
		}
		out[f.File.FileName] = f.File.Level
	}
	return out
}
