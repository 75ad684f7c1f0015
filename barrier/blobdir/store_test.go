package blobdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakestate/lakestate/barrier"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s *Store, name, content string) {
	t.Helper()
	if err := s.Put(t.Context(), name, strings.NewReader(content)); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

func get(t *testing.T, s *Store, name string) string {
	t.Helper()
	rc, err := s.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, s *Store, prefix string) []string {
	t.Helper()
	infos, err := s.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	var out []string
	for _, i := range infos {
		out = append(out, i.Name)
	}
	return out
}

// tempFiles lists whatever a put left in the temporary directory.
func tempFiles(t *testing.T, s *Store) []string {
	t.Helper()
	es, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestPutGetStatOverwrite(t *testing.T) {
	s := open(t)
	put(t, s, "shared/op/0/data-1.parquet", "hello")
	if got := get(t, s, "shared/op/0/data-1.parquet"); got != "hello" {
		t.Fatalf("get = %q", got)
	}
	info, err := s.Stat(t.Context(), "shared/op/0/data-1.parquet")
	if err != nil || info != (barrier.BlobInfo{Name: "shared/op/0/data-1.parquet", Size: 5}) {
		t.Fatalf("stat = %+v, %v", info, err)
	}
	put(t, s, "shared/op/0/data-1.parquet", "replaced!")
	if got := get(t, s, "shared/op/0/data-1.parquet"); got != "replaced!" {
		t.Fatalf("get after overwrite = %q", got)
	}
	if tf := tempFiles(t, s); len(tf) != 0 {
		t.Fatalf("temporary files left: %v", tf)
	}
}

func TestMissingBlobIsPermanentNotFound(t *testing.T) {
	s := open(t)
	put(t, s, "a/b", "x")
	for _, name := range []string{"nope", "a", "a/b/c"} {
		_, err := s.Stat(t.Context(), name)
		if !barrier.IsNotFound(err) || barrier.IsTransient(err) {
			t.Errorf("stat %s: %v (notfound=%v transient=%v)", name, err, barrier.IsNotFound(err), barrier.IsTransient(err))
		}
		if _, err := s.Get(t.Context(), name); !barrier.IsNotFound(err) {
			t.Errorf("get %s: %v", name, err)
		}
		if name != "a" {
			if err := s.Delete(t.Context(), name); err != nil {
				t.Errorf("delete missing %s: %v", name, err)
			}
		}
	}
}

func TestInvalidNamesAreRejected(t *testing.T) {
	s := open(t)
	for _, name := range []string{"", ".", "/abs", "a/../b", "../up", "a//b", "a/", "./a", ".tmp/x", "a/.tmp-1", `a\b`} {
		err := s.Put(t.Context(), name, strings.NewReader("x"))
		var be *barrier.BlobError
		if !errors.As(err, &be) || be.Transient || be.Op != "put" {
			t.Errorf("put %q: %v", name, err)
		}
		if _, err := s.Get(t.Context(), name); err == nil {
			t.Errorf("get %q accepted", name)
		}
		if err := s.Delete(t.Context(), name); err == nil {
			t.Errorf("delete %q accepted", name)
		}
	}
	if got := names(t, s, ""); len(got) != 0 {
		t.Fatalf("invalid puts left blobs: %v", got)
	}
}

// A put whose source fails midway leaves the previous content and no
// temporary file.
func TestFailedPutLeavesOldContent(t *testing.T) {
	s := open(t)
	put(t, s, "chk-1/_metadata", "old")
	boom := errors.New("source broke")
	r := io.MultiReader(strings.NewReader("partial new content"), errReader{boom})
	err := s.Put(t.Context(), "chk-1/_metadata", r)
	if !errors.Is(err, boom) {
		t.Fatalf("put = %v, want %v", err, boom)
	}
	if got := get(t, s, "chk-1/_metadata"); got != "old" {
		t.Fatalf("content after failed put = %q", got)
	}
	err = s.Put(t.Context(), "chk-2/_metadata", io.MultiReader(strings.NewReader("x"), errReader{boom}))
	if !errors.Is(err, boom) {
		t.Fatalf("put = %v", err)
	}
	if got := names(t, s, ""); !slices.Equal(got, []string{"chk-1/_metadata"}) {
		t.Fatalf("blobs = %v", got)
	}
	if tf := tempFiles(t, s); len(tf) != 0 {
		t.Fatalf("temporary files left: %v", tf)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestCancelledPutIsNotTransient(t *testing.T) {
	s := open(t)
	ctx, cancel := context.WithCancel(t.Context())
	r := &cancelAfterFirstRead{cancel: cancel, data: bytes.Repeat([]byte("z"), 1<<20)}
	err := s.Put(ctx, "big", r)
	if !errors.Is(err, context.Canceled) || barrier.IsTransient(err) {
		t.Fatalf("put = %v (transient=%v)", err, barrier.IsTransient(err))
	}
	if got := names(t, s, ""); len(got) != 0 {
		t.Fatalf("cancelled put left %v", got)
	}
	if tf := tempFiles(t, s); len(tf) != 0 {
		t.Fatalf("temporary files left: %v", tf)
	}
}

func TestPutOfCancelledContextWritesNothing(t *testing.T) {
	s := open(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// bytes.Reader writes itself out: one check of ctx before the copy
	err := s.Put(ctx, "whole", bytes.NewReader(bytes.Repeat([]byte("w"), 1<<20)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("put = %v", err)
	}
	if got := names(t, s, ""); len(got) != 0 {
		t.Fatalf("cancelled put left %v", got)
	}
	if tf := tempFiles(t, s); len(tf) != 0 {
		t.Fatalf("temporary files left: %v", tf)
	}
}

// BenchmarkPutMetadata puts a checkpoint's metadata as the coordinator
// streams it: a JSON body and extras in pieces.
func BenchmarkPutMetadata(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte("{}"), 4<<10)
	extras := bytes.Repeat([]byte("x"), 38<<20)
	b.SetBytes(int64(len(body) + len(extras)))
	for b.Loop() {
		r := io.MultiReader(bytes.NewReader(body), bytes.NewReader(extras))
		if err := s.Put(b.Context(), "chk-1/_metadata", r); err != nil {
			b.Fatal(err)
		}
	}
}

type cancelAfterFirstRead struct {
	cancel func()
	data   []byte
}

func (c *cancelAfterFirstRead) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), 1024)], c.data)
	c.data = c.data[n:]
	c.cancel()
	return n, nil
}

func TestDeleteIsIdempotentAndPrunesEmptyDirs(t *testing.T) {
	s := open(t)
	put(t, s, "chk-1/op/0/a", "a")
	put(t, s, "chk-1/op/1/b", "b")
	if err := s.Delete(t.Context(), "chk-1/op/0/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "chk-1/op/0/a"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "chk-1", "op", "0")); !os.IsNotExist(err) {
		t.Fatalf("empty directory chk-1/op/0 kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "chk-1", "op", "1", "b")); err != nil {
		t.Fatalf("sibling lost: %v", err)
	}
	if err := s.Delete(t.Context(), "chk-1/op/1/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "chk-1")); !os.IsNotExist(err) {
		t.Fatalf("empty directory chk-1 kept: %v", err)
	}
	if _, err := os.Stat(s.Root()); err != nil {
		t.Fatalf("root removed: %v", err)
	}
	// Deleting a name prefix (a directory) is not deleting a blob.
	put(t, s, "d/x", "x")
	if err := s.Delete(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "d/x"); got != "x" {
		t.Fatalf("d/x = %q", got)
	}
	// A put after its directory was pruned recreates it.
	put(t, s, "chk-1/op/0/a", "again")
	if got := get(t, s, "chk-1/op/0/a"); got != "again" {
		t.Fatalf("got %q", got)
	}
}

func TestListIsAStringPrefixSortedAndSkipsTemporaries(t *testing.T) {
	s := open(t)
	for _, n := range []string{"chk-10/_metadata", "chk-1/_metadata", "chk-1/x/y", "chk-1.old", "shared/a", "chk-2/_metadata"} {
		put(t, s, n, n)
	}
	if err := os.WriteFile(filepath.Join(s.tmp, "put-stale"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"":         {"chk-1.old", "chk-1/_metadata", "chk-1/x/y", "chk-10/_metadata", "chk-2/_metadata", "shared/a"},
		"chk-1":    {"chk-1.old", "chk-1/_metadata", "chk-1/x/y", "chk-10/_metadata"},
		"chk-1/":   {"chk-1/_metadata", "chk-1/x/y"},
		"chk-1/x":  {"chk-1/x/y"},
		"chk-3/":   nil,
		"zzz":      nil,
		"../":      nil,
		"shared/a": {"shared/a"},
	}
	for prefix, want := range cases {
		if got := names(t, s, prefix); !slices.Equal(got, want) {
			t.Errorf("list %q = %v, want %v", prefix, got, want)
		}
	}
	infos, err := s.List(t.Context(), "chk-1/x")
	if err != nil || len(infos) != 1 || infos[0].Size != int64(len("chk-1/x/y")) {
		t.Fatalf("list sizes = %+v, %v", infos, err)
	}
}

func TestPutUnderAnExistingBlobFailsPermanently(t *testing.T) {
	s := open(t)
	put(t, s, "a", "file")
	err := s.Put(t.Context(), "a/b", strings.NewReader("x"))
	if err == nil || barrier.IsTransient(err) {
		t.Fatalf("put a/b over blob a = %v", err)
	}
}

// Concurrent puts and deletes in shared directories (the uploader and the
// garbage collector) neither fail nor lose a blob that was not deleted.
func TestConcurrentPutsAndDeletes(t *testing.T) {
	s := open(t)
	const writers, perWriter = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*2)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("chk-%d/op/%d/f-%d", i%3, w, i)
				if err := s.Put(context.Background(), name, strings.NewReader(name)); err != nil {
					errs <- err
				}
				if i%2 == 1 { // delete odd files, making directories empty and non-empty again
					if err := s.Delete(context.Background(), name); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want []string
	for w := range writers {
		for i := 0; i < perWriter; i += 2 {
			want = append(want, fmt.Sprintf("chk-%d/op/%d/f-%d", i%3, w, i))
		}
	}
	slices.Sort(want)
	if got := names(t, s, ""); !slices.Equal(got, want) {
		t.Fatalf("listed %d blobs, want %d", len(got), len(want))
	}
	for _, n := range want {
		if got := get(t, s, n); got != n {
			t.Fatalf("%s = %q", n, got)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		err       error
		transient bool
	}{
		{&os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EMFILE}, true},
		{syscall.EINTR, true},
		{context.DeadlineExceeded, true},
		{&os.PathError{Op: "fsync", Path: "x", Err: syscall.EIO}, false},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, false},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, false},
		{context.Canceled, false},
		{errors.New("other"), false},
	}
	for _, c := range cases {
		err := classify("put", "n", c.err)
		if barrier.IsTransient(err) != c.transient {
			t.Errorf("classify(%v) transient = %v, want %v", c.err, !c.transient, c.transient)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("classify(%v) lost the cause: %v", c.err, err)
		}
	}
}

func TestRemoveStaleTemporariesOfCrashedPuts(t *testing.T) {
	s := open(t)
	put(t, s, "chk-1/a", "blob")
	stale := filepath.Join(s.tmp, "put-crashed")
	fresh := filepath.Join(s.tmp, "put-in-progress")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTempAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	if err := reopened.RemoveStaleTemporaries(time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := tempFiles(t, reopened); !slices.Equal(got, []string{"put-in-progress"}) {
		t.Fatalf("temporaries after reopen: %v, want only the recent one", got)
	}
	if got := get(t, reopened, "chk-1/a"); got != "blob" {
		t.Fatalf("published blob after reopen: %q", got)
	}
}

// sourceFile writes content to a new local file and returns it open for
// reading, closed when the test ends, and its path.
func sourceFile(t *testing.T, content []byte) (*os.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, path
}

func TestPutOfAFileCopiesItFromItsOffsetUpToTheLimit(t *testing.T) {
	s := open(t)
	content := bytes.Repeat([]byte("0123456789"), fileCopyChunk/10+1000) // more than one chunk
	src, _ := sourceFile(t, content)
	if err := s.Put(t.Context(), "whole", src); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "whole"); got != string(content) {
		t.Fatalf("whole file: got %d bytes, want %d", len(got), len(content))
	}
	if _, err := src.Seek(3, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	n := int64(fileCopyChunk + 7)
	if err := s.Put(t.Context(), "part", io.LimitReader(src, n)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "part"); got != string(content[3:3+n]) {
		t.Fatalf("limited file: got %d bytes, want %d from offset 3", len(got), n)
	}
}
