package barrier_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
)

// A Store actor that panics while it holds a frozen flush is not restarted
// into a wedged store (every later freeze refused while the flush is held,
// the lost phase's answers contradicting its fresh state) even when the
// system restarts panicking actors: it stops, so the job fails over, and a
// restore from the last completed checkpoint reads exactly its rows.
func TestPaimonStoreActorRestartFailsOver(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 61}, trace: &trace, maxRestarts: 3})
	want := map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.putMap(mapKey, 0, 0)
	wantMap := map[int64]int64{0: 0}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	atC1, mapAtC1 := maps.Clone(want), maps.Clone(wantMap)
	for k := int64(0); k < asyncKeys; k += 3 {
		j.put(k+500, k)
		want[k] = k + 500
	}
	j.putMap(mapKey, 1, 1)
	wantMap[1] = 1
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	runUntilTrace(t, j, &trace, fmt.Sprintf("store-0 *barrier.paimonCommitted id=%d", id))

	tk := j.tasks[0]
	w, err := actors.NewProbe(j.sys, "watcher")
	if err != nil {
		t.Fatal(err)
	}
	w.Watch(tk.pid)
	j.sys.Send(tk.pid, barrier.StrayCommitResult(id+10))
	if _, err := actors.Expect[*actor.Terminated](w); err != nil {
		t.Fatalf("the Store actor did not stop after its panic: %v", err)
	}
	if !strings.Contains(trace.String(), "store-0/paimon-v") {
		t.Fatal("the table agents were never started")
	}
	// The subtask goes on reading its store until the job fails over.
	checkReads(t, j, "after the panic", want, wantMap)
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its store", id)
	}
	m1 := j.metadata(c1)
	j.stop()

	r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 62}, restore: m1})
	checkReads(t, r, "restored from checkpoint 1", atC1, mapAtC1)
	for k := int64(1); k < asyncKeys; k += 4 {
		r.put(k+900, k)
		atC1[k] = k + 900
	}
	c := r.mustComplete(barrier.KindCheckpoint)
	m := r.metadata(c)
	r.checkNoLeaks()
	r.stop()
	r = startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 63}, restore: m})
	checkReads(t, r, "restored from the checkpoint after the failover", atC1, mapAtC1)
}
