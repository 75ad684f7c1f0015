package table

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// faultyFileIO fails the n-th mutating operation (create, write, sync,
// publish, rename, directory sync) and every one after it until healed.
type faultyFileIO struct {
	FileIO
	ops    atomic.Int64
	failAt atomic.Int64 // 0: never
}

func (f *faultyFileIO) fail() error {
	n := f.ops.Add(1)
	if at := f.failAt.Load(); at > 0 && n >= at {
		return errInjected
	}
	return nil
}

type faultyFile struct {
	WritableFile
	f *faultyFileIO
}

func (w faultyFile) Write(p []byte) (int, error) {
	if err := w.f.fail(); err != nil {
		return 0, err
	}
	return w.WritableFile.Write(p)
}

func (w faultyFile) Sync() error {
	if err := w.f.fail(); err != nil {
		return err
	}
	return w.WritableFile.Sync()
}

func (f *faultyFileIO) Create(p string) (WritableFile, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	w, err := f.FileIO.Create(p)
	if err != nil {
		return nil, err
	}
	return faultyFile{WritableFile: w, f: f}, nil
}

func (f *faultyFileIO) PublishExclusive(tmp, target string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.FileIO.PublishExclusive(tmp, target)
}

func (f *faultyFileIO) Rename(a, b string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.FileIO.Rename(a, b)
}

func (f *faultyFileIO) SyncDir(d string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.FileIO.SyncDir(d)
}

// A commit that fails at any I/O step leaves the table readable and at the
// previous or the new snapshot; retrying the same commit completes it
// exactly once, and a commit that failed cleanly leaves no files behind.
func TestCommitFailsCleanlyAtEveryStep(t *testing.T) {
	for at := int64(1); ; at++ {
		base := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "2"})
		a := commitTestFile(t, base, 0, 0, "a", "c", 4)
		b := commitTestFile(t, base, 0, 0, "d", "f", 4)
		if _, err := base.CommitAppend([]ManifestEntry{a}, commitInfo("w", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := base.CommitAppend([]ManifestEntry{b}, commitInfo("w", 2)); err != nil {
			t.Fatal(err)
		}
		out := commitTestFile(t, base, 0, 5, "a", "f", 7)
		fio := &faultyFileIO{FileIO: base.fio}
		tbl, err := Open(fio, base.Dir(), WithRand(rand.NewChaCha8([32]byte{byte(at)})))
		if err != nil {
			t.Fatal(err)
		}
		change := CompactChange{Deleted: []ManifestEntry{a, b}, Added: []ManifestEntry{out},
			DVFiles: []BucketDV{{Bucket: 0, Vectors: map[string]*roaring.Bitmap{out.File.FileName: roaring.BitmapOf(2)}}}}
		before := tableFiles(t, base)
		fio.failAt.Store(at)
		_, err = tbl.CommitCompact(change, commitInfo("c", 1))
		fio.failAt.Store(0)
		if err == nil {
			if at == 1 {
				t.Fatal("no fault was injected")
			}
			return // every step has been failed once
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("fault at op %d: %v", at, err)
		}
		latest, _, _ := base.LatestSnapshotID()
		switch {
		case errors.Is(err, ErrCommitStateUnknown):
			if latest != 2 && latest != 3 {
				t.Fatalf("fault at op %d: latest %d", at, latest)
			}
		case latest != 2:
			t.Fatalf("fault at op %d: a failed commit published snapshot %d", at, latest)
		default:
			if got := tableFiles(t, base); !reflect.DeepEqual(got, before) {
				t.Fatalf("fault at op %d: files left behind:\n%v\n%v", at, got, before)
			}
		}
		r, err := tbl.CommitCompact(change, commitInfo("c", 1))
		if err != nil {
			t.Fatalf("retry after a fault at op %d: %v", at, err)
		}
		if r.SnapshotID != 3 {
			t.Fatalf("retry after a fault at op %d: snapshot %d", at, r.SnapshotID)
		}
		fresh, _ := Open(base.fio, base.Dir())
		if got := liveNames(t, fresh, 3); !reflect.DeepEqual(got, map[string]int32{out.File.FileName: 5}) {
			t.Fatalf("fault at op %d: live %v", at, got)
		}
		_, index, err := fresh.LiveFiles(3)
		if err != nil || len(index) != 1 {
			t.Fatalf("fault at op %d: index %v %v", at, index, err)
		}
		if _, err := fresh.ReadDeletionVectors(index[0]); err != nil {
			t.Fatalf("fault at op %d: %v", at, err)
		}
	}
}
