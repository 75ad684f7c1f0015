package runtime

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// openBenchBackend opens a fresh state backend ("paimon" or "pebble") in
// the benchmark's temporary directory, closed when the benchmark ends.
func openBenchBackend(b *testing.B, backend string) subtask.Backend {
	dir := b.TempDir()
	var be subtask.Backend
	var err error
	if backend == "paimon" {
		be, err = subtask.OpenPaimon(filepath.Join(dir, "state"), subtask.PaimonOptions{NoDeletionVectors: true})
	} else {
		be, err = subtask.OpenPebble(filepath.Join(dir, "db"), subtask.PebbleOptions{
			CheckpointDir: func(id int64) string { return filepath.Join(dir, fmt.Sprintf("chk-%d", id)) },
		})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return be
}

// benchThreadCPU is the CPU time the calling thread used so far, in
// nanoseconds; a benchmark using it locks its goroutine to its thread.
func benchThreadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
