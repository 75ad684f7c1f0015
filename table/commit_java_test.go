package table

import (
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func copyTableDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A Java-written DV table continues under our commits: partitioned entries,
// Java's manifests merged with ours, the index manifest carried and updated.
func TestCommitContinuesJavaTable(t *testing.T) {
	dir := t.TempDir()
	copyTableDir(t, fixtureDir(t, "pk-dv-parquet"), dir)
	tbl, err := Open(NewLocalFileIO(), dir, WithRand(rand.NewChaCha8([32]byte{2})))
	if err != nil {
		t.Fatal(err)
	}
	partTypes := []DataType{Int()}
	p10 := EncodeBinaryRow(partTypes, []Datum{IntDatum(10)})
	keyTypes := []DataType{String().NotNull(), Int().NotNull()}
	key := func(s string, f2 int64) []byte {
		return EncodeBinaryRow(keyTypes, []Datum{BytesDatum([]byte(s)), IntDatum(f2)})
	}
	bucketDir, err := tbl.BucketDir(p10, 1)
	if err != nil || bucketDir != path.Join(dir, "f1=10", "bucket-1") {
		t.Fatalf("bucket dir %q %v", bucketDir, err)
	}
	name := tbl.NewDataFileName()
	if err := writeFileSynced(tbl.fio, path.Join(bucketDir, name), []byte("x")); err != nil {
		t.Fatal(err)
	}
	added := ManifestEntry{Partition: p10, Bucket: 1, File: DataFileMeta{
		FileName: name, FileSize: 1, RowCount: 2, MinKey: key("Zed", 0), MaxKey: key("Zoe", 0),
		MinSequenceNumber: 12, MaxSequenceNumber: 13, ExtraFiles: []string{},
	}}
	r, err := tbl.CommitAppend([]ManifestEntry{added}, commitInfo("go-writer", 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.SnapshotID != 7 {
		t.Fatalf("snapshot %d, want 7", r.SnapshotID)
	}
	s7, _ := tbl.Snapshot(7)
	s6, _ := tbl.Snapshot(6)
	if s7.IndexManifest != s6.IndexManifest || s7.TotalRecordCount != s6.TotalRecordCount+2 || *s7.NextRowID != 0 {
		t.Fatalf("snapshot 7: %+v", s7)
	}
	// Upgrade it to level 3 and add a vector to the Java-written L5 file
	// of that bucket, keeping the one Java wrote.
	files, index, err := tbl.LiveFiles(7)
	if err != nil {
		t.Fatal(err)
	}
	var javaL5 ManifestEntry
	for _, f := range files {
		if f.Bucket == 1 && f.File.Level == 5 {
			javaL5 = f
		}
	}
	var bucket1 IndexManifestEntry
	for _, e := range index {
		if e.Bucket == 1 {
			bucket1 = e
		}
	}
	old, err := tbl.ReadDeletionVectors(bucket1)
	if err != nil {
		t.Fatal(err)
	}
	vectors := map[string]*roaring.Bitmap{javaL5.File.FileName: roaring.Or(old[javaL5.File.FileName], roaring.BitmapOf(1))}
	up := added
	up.File.Level = 3
	if _, err := tbl.CommitCompact(CompactChange{Deleted: []ManifestEntry{added}, Added: []ManifestEntry{up},
		DVFiles: []BucketDV{{Partition: p10, Bucket: 1, Vectors: vectors}}}, commitInfo("go-compactor", 1)); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(NewLocalFileIO(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := fixtureLive(t, fresh, 8)
	want := []string{"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-0 f19db350-1 L4", "f1=10/bucket-1 c5916932-0 L0",
		"f1=10/bucket-1 d18e5571-0 L5", "f1=10/bucket-1 e9932532-0 L0", "f1=20/bucket-0 6922349a-0 L5", "f1=10/bucket-1 " + shortName(name) + " L3"}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("live at 8:\n%v\nwant\n%v", got, want)
	}
	_, index, _ = fresh.LiveFiles(8)
	if len(index) != 2 || index[0].FileName != "index-16bec1d6-fa31-49bd-a240-deadcfff6003-0" {
		t.Fatalf("index %+v", index)
	}
	dvs, err := fresh.ReadDeletionVectors(index[1])
	if err != nil || !reflect.DeepEqual(dvs[javaL5.File.FileName].ToArray(), []uint32{1, 4}) {
		t.Fatalf("bucket 1 vectors %v %v", dvs, err)
	}
}
