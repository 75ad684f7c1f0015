package table

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writeLocal(t *testing.T, fio FileIO, path, content string) {
	t.Helper()
	f, err := fio.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLocalFileIOCreateMakesMissingParentsOnce(t *testing.T) {
	dir := t.TempDir()
	fio := NewLocalFileIO()
	p := filepath.Join(dir, "a", "b", "file")
	writeLocal(t, fio, p, "one")
	if _, ok := fio.ensured[filepath.Join(dir, "a", "b")]; !ok {
		t.Fatal("created directory is not remembered")
	}
	writeLocal(t, fio, filepath.Join(dir, "a", "b", "file2"), "two")
	names, err := fio.List(filepath.Join(dir, "a", "b"))
	if err != nil || !reflect.DeepEqual(names, []string{"file", "file2"}) {
		t.Fatalf("list %v %v", names, err)
	}
	if got, err := fio.ReadFile(p); err != nil || string(got) != "one" {
		t.Fatalf("read %q %v", got, err)
	}
	if n, err := fio.Stat(p); err != nil || n != 3 {
		t.Fatalf("stat %d %v", n, err)
	}
	if _, err := fio.Stat(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of a missing file: %v", err)
	}
	if names, err := fio.List(filepath.Join(dir, "missing")); err != nil || names != nil {
		t.Fatalf("list of a missing dir: %v %v", names, err)
	}
	// A directory removed behind our back is recreated on the next miss.
	if err := fio.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	writeLocal(t, fio, p, "again")
}

func TestLocalFileIOPublishExclusive(t *testing.T) {
	dir := t.TempDir()
	fio := NewLocalFileIO()
	target := filepath.Join(dir, "snapshot-1")
	tmp1, tmp2 := filepath.Join(dir, ".snapshot-1.a.tmp"), filepath.Join(dir, ".snapshot-1.b.tmp")
	writeLocal(t, fio, tmp1, "first")
	writeLocal(t, fio, tmp2, "second")
	if err := fio.PublishExclusive(tmp1, target); err != nil {
		t.Fatal(err)
	}
	err := fio.PublishExclusive(tmp2, target)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second publish: %v, want ErrExist", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "first" {
		t.Fatalf("target was replaced: %q", got)
	}
	for _, tmp := range []string{tmp1, tmp2} {
		if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s left behind: %v", tmp, err)
		}
	}
	if err := renameNoReplace(target, target+"x"); err != nil {
		t.Fatal(err)
	}
	writeLocal(t, fio, tmp1, "third")
	if err := renameNoReplace(tmp1, target+"x"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("renameat2 over an existing file: %v", err)
	}
}

func TestLocalFileIOLinkAndRemove(t *testing.T) {
	dir := t.TempDir()
	fio := NewLocalFileIO()
	src := filepath.Join(dir, "src")
	writeLocal(t, fio, src, "x")
	dst := filepath.Join(dir, "chk-1", "sub", "dst")
	if err := fio.Link(src, dst); err != nil {
		t.Fatal(err)
	}
	if err := fio.Link(filepath.Join(dir, "missing"), filepath.Join(dir, "chk-2", "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("link of a missing source: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chk-2")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a failed link created the destination directory")
	}
	if err := fio.Remove(dst); err != nil {
		t.Fatal(err)
	}
	if err := fio.Remove(dst); err != nil {
		t.Fatalf("removing a missing file: %v", err)
	}
	if err := fio.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}
