package barrier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
	"github.com/lakestate/lakestate/table"
)

// writeSource writes n pseudo-random bytes to a file under dir.
func writeSource(t testing.TB, dir string, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	path := filepath.Join(dir, fmt.Sprintf("src-%d", n))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestPutFileCopiesLocalSourcesExactly(t *testing.T) {
	dir := t.TempDir()
	blobs, err := blobdir.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	fio := table.NewLocalFileIO()
	// Below and above the size from which local files are mapped, and a
	// size of several copy chunks plus a remainder.
	for _, n := range []int{0, 1, 100 << 10, 300 << 10, 9<<20 + 12345} {
		path, data := writeSource(t, dir, n)
		name := fmt.Sprintf("chk-1/f-%d", n)
		if err := barrier.PutFile(t.Context(), blobs, fio, barrier.UploadFile{Blob: name, Source: path, Size: int64(n)}); err != nil {
			t.Fatalf("put %d bytes: %v", n, err)
		}
		got, err := os.ReadFile(filepath.Join(blobs.Root(), "chk-1", fmt.Sprintf("f-%d", n)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("blob of %d bytes differs from its source (%d bytes)", n, len(got))
		}
	}
}

func TestPutFileRefusesASourceOfAnotherSize(t *testing.T) {
	dir := t.TempDir()
	blobs, err := blobdir.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1000, 300 << 10} {
		path, _ := writeSource(t, dir, n)
		err := barrier.PutFile(t.Context(), blobs, table.NewLocalFileIO(), barrier.UploadFile{Blob: "chk-1/f", Source: path, Size: int64(n) + 1})
		if err == nil || barrier.IsTransient(err) {
			t.Fatalf("source of %d bytes put as %d: err = %v, want a permanent error", n, n+1, err)
		}
		if _, err := blobs.Stat(t.Context(), "chk-1/f"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("refused put left a blob: %v", err)
		}
	}
}

func TestPutFileOfCancelledContextWritesNothing(t *testing.T) {
	dir := t.TempDir()
	blobs, err := blobdir.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	path, _ := writeSource(t, dir, 5<<20)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = barrier.PutFile(ctx, blobs, table.NewLocalFileIO(), barrier.UploadFile{Blob: "chk-1/f", Source: path, Size: 5 << 20})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("put = %v, want context.Canceled", err)
	}
	if got, err := blobs.List(t.Context(), ""); err != nil || len(got) != 0 {
		t.Fatalf("cancelled put left %v (%v)", got, err)
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPutFile uploads a local data file into a blobdir store as the
// Uploader does, and reports the process's CPU time per put (cpu-ns/op)
// besides the wall time, which the store's fsync dominates.
func BenchmarkPutFile(b *testing.B) {
	for _, n := range []int{200 << 10, 4 << 20, 32 << 20} {
		b.Run(fmt.Sprintf("size=%dKiB", n>>10), func(b *testing.B) {
			dir := b.TempDir()
			blobs, err := blobdir.Open(filepath.Join(dir, "blobs"))
			if err != nil {
				b.Fatal(err)
			}
			path, _ := writeSource(b, dir, n)
			fio := table.NewLocalFileIO()
			f := barrier.UploadFile{Blob: "chk-1/f", Source: path, Size: int64(n)}
			b.SetBytes(int64(n))
			start := cpuTime(b)
			for b.Loop() {
				if err := barrier.PutFile(b.Context(), blobs, fio, f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
