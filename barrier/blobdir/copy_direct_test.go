package blobdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// pattern is n bytes that differ from page to page and within a page, so a
// page written at the wrong offset or a tail lost shows in a comparison.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestPutOfAFileIsExactAroundTheDirectCopysEdges puts local files of sizes
// at the edges of the direct copy (its minimum, page alignment of the
// part written directly, its chunks, the tail the kernel copies) and of
// limits below and above the file's size, and compares the blobs.
func TestPutOfAFileIsExactAroundTheDirectCopysEdges(t *testing.T) {
	s := open(t)
	dir := t.TempDir()
	sizes := []int{
		directMinBytes - 1, directMinBytes, directMinBytes + 1,
		directMinBytes + directAlign - 1, 3*directAlign*directAlign + 17,
		fileCopyChunk, fileCopyChunk + directAlign, 2*fileCopyChunk + directAlign + 5,
	}
	for _, n := range sizes {
		content := pattern(n)
		path := filepath.Join(dir, fmt.Sprintf("src-%d", n))
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{n, n - 1, n + directAlign} {
			src, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("chk-1/f-%d-%d", n, limit)
			err = s.Put(t.Context(), name, io.LimitReader(src, int64(limit)))
			src.Close()
			if err != nil {
				t.Fatalf("put %d bytes limited to %d: %v", n, limit, err)
			}
			want := content[:min(n, limit)]
			if got := get(t, s, name); !bytes.Equal([]byte(got), want) {
				t.Fatalf("%d bytes limited to %d: blob of %d bytes differs from the source's first %d", n, limit, len(got), len(want))
			}
		}
	}
}

// TestDirectCopyWritesAFileUntouchedByItsSource checks that the blob is a
// copy, not the source's pages: overwriting and truncating the source after
// the put leaves the blob as it was.
func TestDirectCopyWritesAFileUntouchedByItsSource(t *testing.T) {
	s := open(t)
	content := pattern(fileCopyChunk + 3*directAlign + 1)
	src, path := sourceFile(t, content)
	if err := s.Put(t.Context(), "chk-1/f", io.LimitReader(src, int64(len(content)))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xff}, 2*directAlign), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "chk-1/f"); !bytes.Equal([]byte(got), content) {
		t.Fatal("blob changed with its source")
	}
}

// TestDirectCopyStopsBetweenChunksWhenCancelled cancels the context while
// the first chunk is written (from the context's Err, which the copy
// consults before each chunk) and expects the put to fail with nothing
// published or left behind.
func TestDirectCopyStopsBetweenChunksWhenCancelled(t *testing.T) {
	s := open(t)
	content := pattern(3 * fileCopyChunk)
	src, _ := sourceFile(t, content)
	ctx := &cancelAfter{Context: t.Context(), checks: 2} // the put's check, the first chunk's
	err := s.Put(ctx, "chk-1/f", io.LimitReader(src, int64(len(content))))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("put = %v, want context.Canceled", err)
	}
	if ctx.checks > 0 {
		t.Fatal("the copy never consulted the context")
	}
	if got := names(t, s, ""); len(got) != 0 {
		t.Fatalf("cancelled put published %v", got)
	}
	if got := tempFiles(t, s); len(got) != 0 {
		t.Fatalf("cancelled put left temporaries %v", got)
	}
}

// cancelAfter is a context whose Err turns to context.Canceled after
// checks calls returned nil.
type cancelAfter struct {
	context.Context
	checks int
}

func (c *cancelAfter) Err() error {
	if c.checks == 0 {
		return context.Canceled
	}
	c.checks--
	return nil
}
