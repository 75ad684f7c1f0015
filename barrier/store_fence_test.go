package barrier_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/table"
)

// A job fails over while its paimon store's commit runs on the executor
// (the real system): the subtask closes its store, through the fence it
// shares with the Store actor, while the Store actor still has the commit
// out. The close waits for the commit, so nothing writes into the store
// once it is closed, and the Store actor's next job on it (the listing of
// the round's files) is refused: the checkpoint is declined instead of
// completing from a closed store.
func TestPaimonStoreClosedDuringCommit(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1}})
	for k := range int64(100) {
		j.put(k, k)
	}
	j.mustComplete(barrier.KindCheckpoint)
	for k := range int64(100) {
		j.put(k+1, k)
	}
	tk := j.tasks[0]
	var closed, late atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	fs.onCreate(func(p string, w table.WritableFile) table.WritableFile {
		if !strings.Contains(p, "/bucket-") {
			return w
		}
		hold := false
		first.Do(func() { hold = true })
		if !hold {
			return w
		}
		close(entered)
		<-release
		return &closedWatch{WritableFile: w, closed: &closed, late: &late}
	})
	id := j.trigger(barrier.KindCheckpoint)
	j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID()})
	if sd, err := actors.Expect[*barrier.SyncDone](tk.syncs); err != nil || sd.ID != id || sd.Err != nil {
		t.Fatalf("sync phase of checkpoint %d: %v %v", id, err, sd)
	}
	<-entered // the commit writes its data file
	fs.onCreate(nil)
	if err := tk.fence.Close(func() error { closed.Store(true); return tk.backend.Close() }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed from a closed store", id)
	}
	<-tk.fence.Done()
	if err := tk.fence.Err(); err != nil {
		t.Fatal(err)
	}
	if late.Load() {
		t.Fatal("the commit wrote into its store after the store was closed")
	}
}

// closedWatch notes a write to a file after closed was set.
type closedWatch struct {
	table.WritableFile
	closed, late *atomic.Bool
}

func (w *closedWatch) Write(p []byte) (int, error) {
	w.note()
	return w.WritableFile.Write(p)
}

func (w *closedWatch) Sync() error {
	w.note()
	return w.WritableFile.Sync()
}

func (w *closedWatch) Close() error {
	w.note()
	return w.WritableFile.Close()
}

func (w *closedWatch) note() {
	if w.closed.Load() {
		w.late.Store(true)
	}
}
