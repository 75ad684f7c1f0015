package faultfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"
)

func newFS(seed uint64, f Faults) *FS { return New(rand.New(rand.NewPCG(seed, 0)), f) }

func write(t *testing.T, w interface{ Write([]byte) (int, error) }, s string) {
	t.Helper()
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSyncedFileWithSyncedNameSurvivesCrash(t *testing.T) {
	f := newFS(1, Faults{})
	w, err := f.Create("/t/a")
	must(t, err)
	write(t, w, "hello")
	must(t, w.Sync())
	must(t, w.Close())
	must(t, f.SyncDir("/t"))
	f.Crash()
	got, err := f.ReadFile("/t/a")
	must(t, err)
	if string(got) != "hello" {
		t.Fatalf("got %q", got)
	}
}

func TestNameWithoutSyncDirIsForgotten(t *testing.T) {
	f := newFS(1, Faults{})
	w, err := f.Create("/t/a")
	must(t, err)
	write(t, w, "hello")
	must(t, w.Sync())
	must(t, w.Close())
	f.Crash()
	if _, err := f.Stat("/t/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat after crash: %v, want not exist", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write on a closed handle succeeded")
	}
}

func TestRenameAndRemoveNeedSyncDir(t *testing.T) {
	f := newFS(1, Faults{})
	for _, name := range []string{"/t/a", "/t/b"} {
		w, err := f.Create(name)
		must(t, err)
		write(t, w, name)
		must(t, w.Sync())
		must(t, w.Close())
	}
	must(t, f.SyncDir("/t"))
	must(t, f.Rename("/t/a", "/t/c"))
	must(t, f.Remove("/t/b"))
	f.Crash()
	names, err := f.List("/t")
	must(t, err)
	if want := []string{"a", "b"}; !slices.Equal(names, want) {
		t.Fatalf("after unsynced rename and remove: %v, want %v", names, want)
	}
	must(t, f.Rename("/t/a", "/t/c"))
	must(t, f.Remove("/t/b"))
	must(t, f.SyncDir("/t"))
	f.Crash()
	names, err = f.List("/t")
	must(t, err)
	if want := []string{"c"}; !slices.Equal(names, want) {
		t.Fatalf("after synced rename and remove: %v, want %v", names, want)
	}
}

func TestRemoveAllNeedsSyncDirOfParent(t *testing.T) {
	f := newFS(1, Faults{})
	w, err := f.Create("/t/d/a")
	must(t, err)
	must(t, w.Sync())
	must(t, f.SyncDir("/t/d"))
	must(t, f.RemoveAll("/t/d"))
	f.Crash()
	if _, err := f.Stat("/t/d/a"); err != nil {
		t.Fatalf("unsynced RemoveAll was durable: %v", err)
	}
	must(t, f.RemoveAll("/t/d"))
	must(t, f.SyncDir("/t"))
	f.Crash()
	if names, _ := f.List("/t"); len(names) != 0 {
		t.Fatalf("synced RemoveAll left %v", names)
	}
}

func TestPublishExclusive(t *testing.T) {
	f := newFS(1, Faults{})
	for i, want := range []error{nil, fs.ErrExist} {
		w, err := f.Create("/t/tmp")
		must(t, err)
		write(t, w, string(rune('a'+i)))
		must(t, w.Close())
		err = f.PublishExclusive("/t/tmp", "/t/snap")
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Fatalf("publish %d: %v, want %v", i, err, want)
		}
		if _, err := f.Stat("/t/tmp"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("publish %d left tmp: %v", i, err)
		}
	}
	got, err := f.ReadFile("/t/snap")
	must(t, err)
	if string(got) != "a" {
		t.Fatalf("target holds %q, want the first publisher's content", got)
	}
	if err := f.PublishExclusive("/t/snap", "/missing/snap"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("publish into a missing directory: %v, want not exist", err)
	}
	if _, err := f.Stat("/t/snap"); err != nil {
		t.Fatalf("a failed publish into a missing directory lost its source: %v", err)
	}
}

func TestLinkedNamesShareContent(t *testing.T) {
	f := newFS(1, Faults{})
	w, err := f.Create("/t/a")
	must(t, err)
	write(t, w, "x")
	must(t, w.Sync())
	must(t, f.Link("/t/a", "/u/b"))
	must(t, f.SyncDir("/t"))
	must(t, f.SyncDir("/u"))
	f.Crash()
	a, _ := f.ReadFile("/t/a")
	b, _ := f.ReadFile("/u/b")
	if string(a) != "x" || string(b) != "x" {
		t.Fatalf("a=%q b=%q", a, b)
	}
}

// TestUnsyncedWritesDroppedKeptOrTorn writes a synced prefix and unsynced
// writes, crashes under many seeds and checks every outcome is the synced
// prefix plus each write dropped (zeros if a later one survives), kept, or
// torn, and that every kind happens across seeds.
func TestUnsyncedWritesDroppedKeptOrTorn(t *testing.T) {
	writes := []string{"AAAA", "BBBB", "CCCC"}
	seen := map[string]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		f := newFS(seed, Faults{})
		w, err := f.Create("/t/a")
		must(t, err)
		write(t, w, "base")
		must(t, w.Sync())
		must(t, f.SyncDir("/t"))
		for _, s := range writes {
			write(t, w, s)
		}
		f.Crash()
		got, err := f.ReadFile("/t/a")
		must(t, err)
		if !bytes.HasPrefix(got, []byte("base")) {
			t.Fatalf("seed %d: lost synced data: %q", seed, got)
		}
		rest := got[4:]
		for i, s := range writes {
			part := rest[min(4*i, len(rest)):min(4*i+4, len(rest))]
			switch {
			case string(part) == s:
				seen["kept"] = true
			case len(part) == 0 || bytes.Equal(part, make([]byte, len(part))):
				seen["dropped"] = true
			case len(part) < 4 && string(part) == s[:len(part)], bytes.HasPrefix([]byte(s), bytes.TrimRight(part, "\x00")):
				seen["torn"] = true
			default:
				t.Fatalf("seed %d: write %d reads back as %q", seed, i, part)
			}
		}
	}
	for _, kind := range []string{"kept", "dropped", "torn"} {
		if !seen[kind] {
			t.Errorf("no seed %s an unsynced write", kind)
		}
	}
}
