package barrier

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

var benchLayout = subtask.Layout{
	Name:  "v",
	Kind:  subtask.KindValue,
	Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
	Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
}

func benchPut(v *subtask.ValueState, from, n, val int64) {
	for k := from; k < from+n; k++ {
		v.Put(subtask.Key{Group: int32(keygroup.ForKeyHash(int32(k), 128)), Cols: subtask.Row{subtask.Int(k)}}, subtask.Row{subtask.Int(val)})
	}
}

// BenchmarkBarrierSync measures a store's sync phase (flush of a 10K-row
// delta, listing of the checkpoint's files, reuse decision) over state of
// different sizes, and reports bytes uploaded per byte of files created
// since the last confirmed checkpoint.
func BenchmarkBarrierSync(b *testing.B) {
	sizes := []int64{1_000_000, 10_000_000}
	if testing.Short() {
		sizes = []int64{100_000, 1_000_000}
	}
	const delta = 10_000
	for _, backend := range []string{BackendPebble, BackendMemory} {
		for _, rows := range sizes {
			b.Run(fmt.Sprintf("%s/rows=%d", backend, rows), func(b *testing.B) {
				dir := b.TempDir()
				fio := table.NewLocalFileIO()
				work := filepath.Join(dir, "work")
				var be subtask.Backend
				if backend == BackendMemory {
					be = subtask.NewMemory()
				} else {
					var err error
					be, err = subtask.OpenPebble(filepath.Join(dir, "db"), subtask.PebbleOptions{CheckpointDir: PebbleCheckpointDirs(work)})
					if err != nil {
						b.Fatal(err)
					}
				}
				defer be.Close()
				store := subtask.NewStore(be)
				v, err := store.Value(benchLayout)
				if err != nil {
					b.Fatal(err)
				}
				id := CheckpointID(0)
				flush := func() ([]TableFiles, error) {
					id++
					return flushStore(store, backend, id, CheckpointDir(work, id), fio)
				}
				for at := int64(0); at < rows; at += 1_000_000 {
					benchPut(v, at, min(1_000_000, rows-at), 0)
					if _, err := flush(); err != nil {
						b.Fatal(err)
					}
					fio.RemoveAll(CheckpointDir(work, id))
				}
				h, _ := NewHistory("bench")
				tables, _ := flush()
				d, _ := h.Decide(id, KindCheckpoint, tables)
				h.Acknowledged(d)
				h.Confirm(id)
				fio.RemoveAll(CheckpointDir(work, id))
				var uploaded, created int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					benchPut(v, int64(i*delta)%rows, delta, int64(i+1))
					b.StartTimer()
					tables, err := flush()
					if err != nil {
						b.Fatal(err)
					}
					d, err := h.Decide(id, KindCheckpoint, tables)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					uploaded += d.UploadBytes()
					for _, t := range tables {
						for _, f := range t.Files {
							if _, ok := h.base[fileSlot{t.Name, f.Path}]; !ok || !f.Immutable {
								created += f.Size
							}
						}
					}
					h.Acknowledged(d)
					h.Confirm(id)
					fio.RemoveAll(CheckpointDir(work, id))
					b.StartTimer()
				}
				b.StopTimer()
				if created > 0 {
					b.ReportMetric(float64(uploaded)/float64(created), "uploaded/created")
				}
				b.ReportMetric(float64(uploaded)/float64(b.N), "upload-B/op")
			})
		}
	}
}
