package barrier_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/subtask"
)

// BenchmarkRestore restores a checkpoint of two subtasks aligned (at
// parallelism 2) and rescaled to 3, on the pebble and the paimon backend, and
// reports bytes read per restore. A restore ends with the store ready to
// read (a paimon rescale bulk-loads the top level of its tables).
func BenchmarkRestore(b *testing.B) {
	rows := int64(1_000_000)
	if testing.Short() {
		rows = 100_000
	}
	for _, backend := range []string{barrier.BackendPebble, barrier.BackendPaimon} {
		b.Run(backend, func(b *testing.B) { benchmarkRestore(b, backend, rows) })
	}
}

func benchmarkRestore(b *testing.B, backend string, rows int64) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), b.TempDir()
	j := startJob(b, blobs, fs, root, jobConfig{backend: backend, parallelism: 2, maxP: 128})
	for at := int64(0); at < rows; at += 100_000 {
		for k := at; k < min(at+100_000, rows); k++ {
			j.owner(k).values.Put(keyOf(k, 128), subtask.Row{subtask.Int(k)})
		}
		for _, tk := range j.tasks {
			tk.store.EndBatch()
		}
	}
	m := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	j.stop()
	for _, p := range []int{2, 3} {
		b.Run(fmt.Sprintf("rows=%d/parallelism=2to%d", rows, p), func(b *testing.B) {
			plans, err := barrier.PlanRestore(m, opID, p)
			if err != nil {
				b.Fatal(err)
			}
			var read int64
			for i := 0; i < b.N; i++ {
				for _, plan := range plans {
					dir := filepath.Join(b.TempDir(), "state")
					id, _ := barrier.NewBackendID(rand.Reader)
					r, err := barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{Metadata: m, Plan: plan, Backend: backend,
						Blobs: blobs, FileIO: fs, Dir: dir, BackendID: id})
					if err != nil {
						b.Fatal(err)
					}
					store := subtask.NewStore(r.Backend)
					if _, err := store.Value(valueLayout); err != nil {
						b.Fatal(err)
					}
					if err := r.Finish(store, fs); err != nil {
						b.Fatal(err)
					}
					read += r.BytesRead
					r.Backend.Close()
				}
			}
			b.ReportMetric(float64(read)/float64(b.N), "read-B/op")
		})
	}
}
