package barrier_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkRestorePaimon is BenchmarkRestore on the paimon backend: a value
// state of two subtasks, restored aligned (at parallelism 2) and rescaled to
// 3, each restore ready to read (a rescale's Finish includes the clip, its
// commit and the maintenance round). Files are synced, as a restore does.
func BenchmarkRestorePaimon(b *testing.B) {
	rows := int64(1_000_000)
	if testing.Short() {
		rows = 100_000
	}
	setup := paimonSetup{maxP: 128, layouts: []subtask.Layout{valueLayout}, fio: table.NewLocalFileIO()}
	blobs := newMemBlobs()
	j := newPaimonJob(b, setup, 2)
	for at := int64(0); at < rows; at += 100_000 {
		for k := at; k < min(at+100_000, rows); k++ {
			j.owner(k).values.Put(keyOf(k, setup.maxP), subtask.Row{subtask.Int(k)})
		}
		for _, pt := range j.tasks {
			pt.store.EndBatch()
		}
	}
	m, _ := j.checkpoint(blobs, 1)
	for _, pt := range j.tasks {
		pt.close()
	}
	for _, p := range []int{2, 3} {
		b.Run(fmt.Sprintf("rows=%d/parallelism=2to%d", rows, p), func(b *testing.B) {
			plans, err := barrier.PlanRestore(m, opID, p)
			if err != nil {
				b.Fatal(err)
			}
			var read int64
			for i := 0; i < b.N; i++ {
				for _, plan := range plans {
					r, err := restorePaimon(setup.fio, blobs, m, plan, filepath.Join(b.TempDir(), "state"))
					if err != nil {
						b.Fatal(err)
					}
					store := subtask.NewStore(r.Backend)
					if _, err := store.Value(valueLayout); err != nil {
						b.Fatal(err)
					}
					if err := r.Finish(store, setup.fio); err != nil {
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

// owner is the task owning key k.
func (j *paimonJob) owner(k int64) *paimonTask {
	for _, pt := range j.tasks {
		if pt.kg.Contains(keygroup.ForKeyHash(int32(k), j.maxP)) {
			return pt
		}
	}
	j.t.Fatalf("no task owns key %d", k)
	return nil
}
