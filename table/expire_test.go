package table

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// tableFiles lists the table-relative paths of data, manifest and index
// files on disk.
func tableFiles(t *testing.T, tbl *Table) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(tbl.Dir(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tbl.Dir(), p)
		if strings.HasPrefix(rel, "schema/") || strings.HasPrefix(rel, "snapshot/") {
			return nil
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out
}

// referencedFiles is every file some snapshot from earliest on references.
func referencedFiles(t *testing.T, tbl *Table) []string {
	t.Helper()
	fresh, err := Open(tbl.fio, tbl.Dir())
	if err != nil {
		t.Fatal(err)
	}
	earliest, _, _ := fresh.EarliestSnapshotID()
	latest, _, _ := fresh.LatestSnapshotID()
	set := map[string]bool{}
	for id := earliest; id <= latest; id++ {
		s, err := fresh.Snapshot(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.metaFilesOf(s, set, false); err != nil {
			t.Fatal(err)
		}
		files, _, err := fresh.LiveFiles(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			dir, _ := fresh.BucketPath(f.Partition, f.Bucket)
			set[path.Join(dir, f.File.FileName)] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestExpireRemovesExactlyTheUnreferencedFiles(t *testing.T) {
	tbl := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "4"})
	model := churn(t, tbl, 30, nil)
	latest, _, _ := tbl.LatestSnapshotID()
	before := tableFiles(t, tbl)
	res, err := tbl.Expire(5, PinSet{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Earliest != latest-4 || len(res.Expired) != int(latest-5) || res.Expired[0] != 1 {
		t.Fatalf("result %+v (latest %d)", res.Expired, latest)
	}
	if earliest, _, _ := tbl.EarliestSnapshotID(); earliest != latest-4 {
		t.Fatalf("earliest %d", earliest)
	}
	hint, _ := os.ReadFile(filepath.Join(tbl.Dir(), "snapshot", "EARLIEST"))
	if string(hint) != "" && string(hint) != itoa(latest-4) {
		t.Fatalf("EARLIEST hint %q", hint)
	}
	after := tableFiles(t, tbl)
	if got, want := after, referencedFiles(t, tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("files on disk differ from the referenced ones:\n%v\n%v", got, want)
	}
	if len(after)+len(res.Deleted) != len(before) {
		t.Fatalf("%d files before, %d after, %d reported deleted", len(before), len(after), len(res.Deleted))
	}
	fresh, _ := Open(tbl.fio, tbl.Dir())
	if got := liveNames(t, fresh, latest); !reflect.DeepEqual(got, model) {
		t.Fatalf("live after expiration %v, model %v", got, model)
	}
	// Nothing more to do.
	if res, err := tbl.Expire(5, PinSet{}); err != nil || len(res.Expired) != 0 || len(res.Deleted) != 0 {
		t.Fatalf("second run %+v %v", res, err)
	}
	// Commits continue on the expired table.
	f := commitTestFile(t, tbl, 0, 0, "z", "zz", 1)
	if _, err := tbl.CommitAppend([]ManifestEntry{f}, commitInfo("w", latest+1)); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestExpireKeepsPinnedSnapshotsAndFiles(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	churn(t, tbl, 24, nil)
	latest, _, _ := tbl.LatestSnapshotID()
	pinnedSnap := int64(6)
	pinnedLive := liveNames(t, tbl, pinnedSnap)
	// A file only snapshot 2 references, pinned by path.
	s2live := liveNames(t, tbl, 2)
	var pinnedFile string
	for name := range s2live {
		if _, later := liveNames(t, tbl, latest)[name]; !later {
			pinnedFile = path.Join("bucket-"+itoa(int64(bucketOfName(t, tbl, 2, name))), name)
			break
		}
	}
	if pinnedFile == "" {
		t.Fatal("no file to pin")
	}
	res, err := tbl.Expire(2, PinSet{Snapshots: []int64{pinnedSnap, latest + 10}, Files: []string{pinnedFile}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Earliest != pinnedSnap || len(res.Expired) != int(pinnedSnap-1) {
		t.Fatalf("expired %v, earliest %d", res.Expired, res.Earliest)
	}
	fresh, _ := Open(tbl.fio, tbl.Dir())
	if got := liveNames(t, fresh, pinnedSnap); !reflect.DeepEqual(got, pinnedLive) {
		t.Fatalf("pinned snapshot lost files")
	}
	if _, err := os.Stat(filepath.Join(tbl.Dir(), pinnedFile)); err != nil {
		t.Fatalf("pinned file removed: %v", err)
	}
	for _, d := range res.Deleted {
		if d == pinnedFile {
			t.Fatal("pinned file reported deleted")
		}
	}
	if _, err := tbl.Expire(0, PinSet{}); err == nil {
		t.Fatal("keep 0 accepted")
	}
}

func bucketOfName(t *testing.T, tbl *Table, snap int64, name string) int32 {
	files, _, err := tbl.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.File.FileName == name {
			return f.Bucket
		}
	}
	t.Fatalf("%s not live at %d", name, snap)
	return 0
}

// failingRemoves fails every Remove after the first n succeed.
type failingRemoves struct {
	FileIO
	left atomic.Int64
}

var errInjected = errors.New("injected remove failure")

func (f *failingRemoves) Remove(p string) error {
	if f.left.Add(-1) < 0 {
		return errInjected
	}
	return f.FileIO.Remove(p)
}

// An expiration interrupted after any number of removals, then run again,
// ends exactly where an uninterrupted one does.
func TestExpireInterruptedAndRerun(t *testing.T) {
	ref := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "4"})
	churn(t, ref, 20, nil)
	refRes, err := ref.Expire(3, PinSet{})
	if err != nil {
		t.Fatal(err)
	}
	want := tableFiles(t, ref)
	total := len(refRes.Deleted) + len(refRes.Expired)
	for _, n := range []int{0, 1, len(refRes.Deleted) / 3, len(refRes.Deleted) / 2, len(refRes.Deleted) - 1, len(refRes.Deleted) + 1, total - 1} {
		tbl := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "4"})
		churn(t, tbl, 20, nil)
		fio := &failingRemoves{FileIO: tbl.fio}
		fio.left.Store(int64(n))
		broken, err := Open(fio, tbl.Dir())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := broken.Expire(3, PinSet{}); !errors.Is(err, errInjected) {
			t.Fatalf("after %d removals: %v", n, err)
		}
		if _, err := tbl.Expire(3, PinSet{}); err != nil {
			t.Fatalf("rerun after %d removals: %v", n, err)
		}
		if got := tableFiles(t, tbl); len(got) != len(want) {
			t.Fatalf("interrupted after %d removals: %d files left, want %d", n, len(got), len(want))
		}
		if got, ref := tableFiles(t, tbl), referencedFiles(t, tbl); !reflect.DeepEqual(got, ref) {
			t.Fatalf("interrupted after %d removals: files on disk differ from the referenced ones", n)
		}
		latest, _, _ := tbl.LatestSnapshotID()
		if _, err := tbl.fio.Stat(tbl.paths.snapshotPath(latest - 3)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("interrupted after %d removals: snapshot %d survived", n, latest-3)
		}
	}
}
