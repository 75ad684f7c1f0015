package table

import (
	"errors"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestCommitAppendThenCompactWithDeletionVectors(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	a := commitTestFile(t, tbl, 0, 0, "a", "m", 3)
	b := commitTestFile(t, tbl, 0, 0, "c", "z", 4)
	r, err := tbl.CommitAppend([]ManifestEntry{a, b}, commitInfo("writer", 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.SnapshotID != 1 || r.Skipped || len(r.Added) != 2 {
		t.Fatalf("result %+v", r)
	}
	s1, err := tbl.Snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	if s1.CommitKind != CommitAppend || s1.TotalRecordCount != 7 || s1.DeltaRecordCount != 7 || s1.IndexManifest != "" ||
		s1.TimeMillis != 1700000000001 || s1.SchemaID != 0 || *s1.BaseManifestListSize == 0 {
		t.Fatalf("snapshot 1: %+v", s1)
	}
	hint, err := tbl.fio.ReadFile(path.Join(tbl.Dir(), "snapshot", "LATEST"))
	if err != nil || string(hint) != "1" {
		t.Fatalf("LATEST hint %q %v", hint, err)
	}

	// Compaction: a rewritten into c at level 5, b upgraded to level 4, a
	// deletion vector on b.
	c := commitTestFile(t, tbl, 0, 5, "a", "m", 2)
	dv := roaring.BitmapOf(1, 3)
	r, err = tbl.CommitCompact(CompactChange{
		Deleted: []ManifestEntry{a, b},
		Added:   []ManifestEntry{c, upgraded(b, 4)},
		DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{b.File.FileName: dv}}},
	}, commitInfo("compactor", 1))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := tbl.Snapshot(r.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID != 2 || s2.CommitKind != CommitCompact || s2.TotalRecordCount != 6 || s2.DeltaRecordCount != -1 || s2.IndexManifest == "" {
		t.Fatalf("snapshot 2: %+v", s2)
	}
	want := map[string]int32{c.File.FileName: 5, b.File.FileName: 4}
	if got := liveNames(t, tbl, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("live at 2: %v, want %v", got, want)
	}
	if got := liveNames(t, tbl, 1); !reflect.DeepEqual(got, map[string]int32{a.File.FileName: 0, b.File.FileName: 0}) {
		t.Fatalf("live at 1: %v", got)
	}
	// A fresh Table walks the manifests instead of using the cache.
	fresh, err := Open(tbl.fio, tbl.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := liveNames(t, fresh, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("fresh live at 2: %v", got)
	}
	_, index, err := fresh.LiveFiles(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(index) != 1 || index[0].Bucket != 0 || index[0].RowCount != 1 || len(index[0].DVRanges) != 1 ||
		index[0].DVRanges[0].DataFile != b.File.FileName || *index[0].DVRanges[0].Cardinality != 2 {
		t.Fatalf("index %+v", index)
	}
	dvs, err := fresh.ReadDeletionVectors(index[0])
	if err != nil || !dvs[b.File.FileName].Equals(dv) {
		t.Fatalf("deletion vectors %v %v", dvs, err)
	}
	delta, indexName, err := fresh.ReadDelta(2)
	if err != nil || len(delta) != 4 || indexName != s2.IndexManifest {
		t.Fatalf("delta %d entries, %q, %v", len(delta), indexName, err)
	}
	if delta[0].Kind != FileDelete || delta[3].Kind != FileAdd || delta[3].File.Level != 4 {
		t.Fatalf("delta order %+v", delta)
	}

	// A later compaction that removes the DV file of bucket 0.
	r, err = tbl.CommitCompact(CompactChange{
		Deleted: []ManifestEntry{upgraded(b, 4)},
		DVFiles: []BucketDV{{Bucket: 0}},
	}, commitInfo("compactor", 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, index, _ := fresh.LiveFiles(r.SnapshotID); len(index) != 0 {
		t.Fatalf("index after removal: %+v", index)
	}
}

func TestCommitConflictsAreRefusedAndLeaveNoFiles(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	a := commitTestFile(t, tbl, 0, 5, "a", "f", 3)
	b := commitTestFile(t, tbl, 1, 0, "a", "z", 3)
	if _, err := tbl.CommitAppend([]ManifestEntry{a, b}, commitInfo("w", 1)); err != nil {
		t.Fatal(err)
	}
	manifests := func() []string {
		names, _ := tbl.fio.List(path.Join(tbl.Dir(), "manifest"))
		return names
	}
	before := manifests()
	stranger := commitTestFile(t, tbl, 0, 0, "x", "y", 1)
	overlapping := commitTestFile(t, tbl, 0, 5, "e", "g", 1)
	for _, tc := range []struct {
		name string
		ch   CompactChange
		want string
	}{
		{"delete not live", CompactChange{Deleted: []ManifestEntry{stranger}}, "not live"},
		{"delete at the wrong level", CompactChange{Deleted: []ManifestEntry{upgraded(b, 3)}}, "not live"},
		{"add twice", CompactChange{Added: []ManifestEntry{a}}, "already live"},
		{"overlap", CompactChange{Added: []ManifestEntry{overlapping}}, "overlap at level 5"},
		{"dv of a stranger", CompactChange{DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{stranger.File.FileName: roaring.BitmapOf(0)}}}}, "not a live file"},
		{"dv of another bucket's file", CompactChange{DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{b.File.FileName: roaring.BitmapOf(0)}}}}, "not a live file"},
		{"dv beyond the rows", CompactChange{DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{a.File.FileName: roaring.BitmapOf(3)}}}}, "marks row 3 of 3"},
	} {
		_, err := tbl.CommitCompact(tc.ch, commitInfo("c", 1))
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a conflict with %q", tc.name, err, tc.want)
		}
		if got := manifests(); !reflect.DeepEqual(got, before) {
			t.Fatalf("%s: manifest directory changed: %v -> %v", tc.name, before, got)
		}
	}
	if id, _, _ := tbl.LatestSnapshotID(); id != 1 {
		t.Fatalf("a refused commit published snapshot %d", id)
	}
	// A deletion vector, then removing its file without a new set.
	if _, err := tbl.CommitCompact(CompactChange{DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{a.File.FileName: roaring.BitmapOf(0)}}}}, commitInfo("c", 2)); err != nil {
		t.Fatal(err)
	}
	_, err := tbl.CommitCompact(CompactChange{Deleted: []ManifestEntry{a}}, commitInfo("c", 3))
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "keeps its deletion vector") {
		t.Fatalf("removing a file with a vector: %v", err)
	}
	// Moving it to another level keeps the vector valid: same file name.
	if _, err := tbl.CommitCompact(CompactChange{Deleted: []ManifestEntry{a}, Added: []ManifestEntry{upgraded(a, 4)}}, commitInfo("c", 3)); err != nil {
		t.Fatalf("level change of a file with a vector: %v", err)
	}
}

func TestCommitRejectsBadEntries(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	good := commitTestFile(t, tbl, 0, 0, "a", "b", 1)
	for _, tc := range []struct {
		name string
		edit func(e *ManifestEntry)
		want string
	}{
		{"bucket", func(e *ManifestEntry) { e.Bucket = 2 }, "bucket 2 outside"},
		{"total buckets", func(e *ManifestEntry) { e.TotalBuckets = 3 }, "written for 3 buckets"},
		{"name", func(e *ManifestEntry) { e.File.FileName = "a/b" }, "bad data file name"},
		{"key arity", func(e *ManifestEntry) { e.File.MinKey = EmptyBinaryRow() }, "arity 0"},
		{"key order", func(e *ManifestEntry) { e.File.MinKey, e.File.MaxKey = e.File.MaxKey, e.File.MinKey }, "min key above max key"},
		{"partition", func(e *ManifestEntry) { e.Partition = commitTestKey(1, "p") }, "partition row of arity 2"},
		{"schema", func(e *ManifestEntry) { e.File.SchemaID = 3 }, "schema 3 is newer"},
	} {
		e := good
		tc.edit(&e)
		_, err := tbl.CommitAppend([]ManifestEntry{e}, commitInfo("w", 1))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, ok, _ := tbl.LatestSnapshotID(); ok {
		t.Fatal("a rejected commit published a snapshot")
	}
}

func TestCommitIsIdempotentPerUserIdentifierAndKind(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	a := commitTestFile(t, tbl, 0, 0, "a", "b", 1)
	r1, err := tbl.CommitAppend([]ManifestEntry{a}, commitInfo("w", 7))
	if err != nil {
		t.Fatal(err)
	}
	again, err := tbl.CommitAppend([]ManifestEntry{a}, commitInfo("w", 7))
	if err != nil || !again.Skipped || again.SnapshotID != r1.SnapshotID {
		t.Fatalf("retry: %+v %v", again, err)
	}
	// The same identifier as a COMPACT is a different commit.
	r2, err := tbl.CommitCompact(CompactChange{Deleted: []ManifestEntry{a}, Added: []ManifestEntry{upgraded(a, 5)}}, commitInfo("w", 7))
	if err != nil || r2.Skipped || r2.SnapshotID != 2 {
		t.Fatalf("compact with the same identifier: %+v %v", r2, err)
	}
	// Another Table instance (a restarted process) sees both.
	fresh, err := Open(tbl.fio, tbl.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[CommitKind]int64{CommitAppend: 1, CommitCompact: 2} {
		var r CommitResult
		if kind == CommitAppend {
			r, err = fresh.CommitAppend([]ManifestEntry{a}, commitInfo("w", 7))
		} else {
			r, err = fresh.CommitCompact(CompactChange{Deleted: []ManifestEntry{a}, Added: []ManifestEntry{upgraded(a, 5)}}, commitInfo("w", 7))
		}
		if err != nil || !r.Skipped || r.SnapshotID != want {
			t.Fatalf("%s retry on a fresh table: %+v %v", kind, r, err)
		}
	}
	if _, err := fresh.CommitAppend([]ManifestEntry{commitTestFile(t, tbl, 0, 0, "c", "d", 1)}, commitInfo("w", 6)); err == nil || !strings.Contains(err.Error(), "already committed identifier 7") {
		t.Fatalf("older identifier: %v", err)
	}
	if id, _, _ := fresh.LatestSnapshotID(); id != 2 {
		t.Fatalf("latest %d", id)
	}
}
