package table

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A snapshot copied file by file (its metadata files, live data files and
// index files) into an empty directory opens and lists the same live files.
func TestSnapshotMetaFilesCopyOut(t *testing.T) {
	tbl := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "4"})
	var snaps []int64
	churn(t, tbl, 20, func(_ int, snap int64, _ map[string]int32) { snaps = append(snaps, snap) })
	for _, id := range []int64{snaps[0], snaps[len(snaps)/2], snaps[len(snaps)-1]} {
		meta, err := tbl.SnapshotMetaFiles(id)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := tbl.Snapshot(id)
		want := map[string]bool{}
		if err := tbl.metaFilesOf(s, want, false); err != nil {
			t.Fatal(err)
		}
		want["snapshot/snapshot-"+itoa(id)] = true
		want["schema/schema-0"] = true
		got := map[string]bool{}
		for _, f := range meta {
			if got[f.Path] {
				t.Fatalf("snapshot %d: %s named twice", id, f.Path)
			}
			got[f.Path] = true
			st, err := os.Stat(filepath.Join(tbl.Dir(), f.Path))
			if err != nil || st.Size() != f.Size {
				t.Fatalf("snapshot %d: %s has size %d, listed %d (%v)", id, f.Path, st.Size(), f.Size, err)
			}
		}
		for p := range want {
			if strings.HasPrefix(p, "index/") {
				delete(want, p) // index files are the listing's
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("snapshot %d: metadata files\n%v\nwant\n%v", id, got, want)
		}

		out := t.TempDir()
		copyRel := func(rel string) {
			data, err := os.ReadFile(filepath.Join(tbl.Dir(), rel))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, rel), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range meta {
			copyRel(f.Path)
		}
		files, _, err := tbl.LiveFiles(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			dir, _ := tbl.BucketPath(f.Partition, f.Bucket)
			copyRel(path.Join(dir, f.File.FileName))
		}
		copied, err := Open(NewLocalFileIO(), out)
		if err != nil {
			t.Fatal(err)
		}
		if latest, _, _ := copied.LatestSnapshotID(); latest != id {
			t.Fatalf("copy of snapshot %d opens at %d", id, latest)
		}
		if got, want := liveNames(t, copied, id), liveNames(t, tbl, id); !reflect.DeepEqual(got, want) {
			t.Fatalf("copy of snapshot %d lists %v, want %v", id, got, want)
		}
	}
}

func TestSnapshotMetaFilesMissing(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	if _, err := tbl.SnapshotMetaFiles(1); err == nil {
		t.Fatal("metadata files of a snapshot that does not exist")
	}
	f := commitTestFile(t, tbl, 0, 0, "a", "b", 1)
	r, err := tbl.CommitAppend([]ManifestEntry{f}, commitInfo("w", 1))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := tbl.Snapshot(r.SnapshotID)
	if err := os.Remove(filepath.Join(tbl.Dir(), "manifest", s.DeltaManifestList)); err != nil {
		t.Fatal(err)
	}
	_, err = tbl.SnapshotMetaFiles(r.SnapshotID)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "snapshot 1") {
		t.Fatalf("missing manifest list: %v", err)
	}
}
