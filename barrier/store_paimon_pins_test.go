package barrier_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
)

// A checkpoint aborted before its round answered leaves no pin behind,
// wherever the abort falls: before the commit's result (the Unpin reaches
// the agents before their rounds are asked for, and the map table, whose
// first rows the checkpoint commits, gets its agent only after the abort
// went out), or, over a few schedules with the abort right after the
// freeze, while a round is out (the Unpin overtakes the round's answer at
// the agent). Only savepoints follow, whose completions release their own
// pins and nothing older, so a pin of the aborted round that nothing
// unpins would hold expiration at its snapshot for good; with one snapshot
// retained and expiration after every round, each table's earliest
// snapshot moves past its aborted round.
func TestPaimonAbortedRoundLeavesNoPin(t *testing.T) {
	t.Run("abort before the commit's result", func(t *testing.T) {
		if seen := abortedRoundRun(t, 40, false); !slices.Contains(seen, abortBeforeCommit) {
			t.Fatalf("orderings %v", seen)
		}
	})
	t.Run("abort after the freeze", func(t *testing.T) {
		overtaken := 0
		for seed := uint64(41); seed < 53 && !t.Failed(); seed++ {
			if slices.Contains(abortedRoundRun(t, seed, true), unpinOvertakesRound) {
				overtaken++
			}
		}
		if overtaken == 0 && !t.Failed() {
			t.Fatalf("in no schedule: %s", unpinOvertakesRound)
		}
	})
}

// The orderings abortedRoundRun reports.
const (
	abortBeforeCommit   = "the abort reached the store before the commit's result"
	unpinOvertakesRound = "the unpin reached the agent while its round was out"
)

// abortedRoundRun runs the scenario in a simulation of seed and reports the
// orderings that occurred. The coordinator aborts the checkpoint, after
// the freeze, or (not afterFreeze) while the store, deaf to it, has not
// seen the barrier; the barrier and the abort then reach the store's
// mailbox together, so the abort comes before the freeze's answer. Either
// way the store hears of the abort once.
func abortedRoundRun(t *testing.T, seed uint64, afterFreeze bool) []string {
	t.Helper()
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{
		jobConfig: jobConfig{retain: 1, sim: seed},
		maint:     compaction.Config{RetainSnapshots: 1, ExpireEvery: 1},
		trace:     &trace,
	})
	defer j.stop()
	want := map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.mustComplete(barrier.KindCheckpoint)
	for k := range int64(100) {
		j.put(k+1, k)
		want[k] = k + 1
	}
	// The map state's first rows: its table gets an agent only once the
	// aborted checkpoint's commit answers, after the abort.
	j.putMap(mapKey, 0, 0)
	id := j.trigger(barrier.KindCheckpoint)
	tk := j.tasks[0]
	barrierMsg := &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID()}
	if afterFreeze {
		j.sys.Send(tk.relay, barrierMsg)
		runUntilTrace(t, j, &trace, fmt.Sprintf("store-0 *barrier.paimonFrozen id=%d", id))
		j.sys.Send(j.coord, barrier.CheckpointTimeout(id))
	} else {
		tk.deaf.Store(true)
		j.sys.Send(j.coord, barrier.CheckpointTimeout(id))
		runUntilTrace(t, j, &trace, fmt.Sprintf("relay-0 *barrier.Aborted id=%d", id))
		tk.deaf.Store(false)
		j.sys.Send(tk.pid, barrierMsg)
		j.sys.Send(tk.pid, &barrier.Aborted{ID: id, Err: errors.New("checkpoint timed out")})
	}
	if sd, err := actors.Expect[*barrier.SyncDone](tk.syncs); err != nil || sd.ID != id {
		t.Fatalf("seed %d: sync phase of checkpoint %d: %v %v", seed, id, err, sd)
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("seed %d: checkpoint %d completed", seed, id)
	}
	j.settle()
	rounds := map[string]int64{}
	for _, name := range []string{valueLayout.Name, syncMapLayout.Name} {
		l := traceLine(&trace, fmt.Sprintf("store-0 *barrier.tableRound table=%s id=%d ", name, id))
		var round int64
		if _, err := fmt.Sscanf(l[strings.Index(l, "snapshot="):], "snapshot=%d err=<nil>", &round); err != nil || !strings.HasSuffix(l, "err=<nil>") {
			t.Fatalf("seed %d: the round of table %q of the aborted checkpoint %d: %q", seed, name, id, l)
		}
		rounds[name] = round
	}
	tr := trace.String()
	at := func(line string) int { return strings.Index(tr, fmt.Sprintf(line, id)) }
	var seen []string
	if at("store-0 *barrier.Aborted id=%d ") < at("store-0 *barrier.paimonCommitted id=%d ") {
		seen = append(seen, abortBeforeCommit)
	}
	if unpin := at("store-0/paimon-v *barrier.agentUnpin id=%d "); at("store-0/paimon-v *barrier.agentRound id=%d ") < unpin &&
		unpin < at("store-0/paimon-v *compaction.RoundDone chk=%d ") {
		seen = append(seen, unpinOvertakesRound)
	}
	wantMap := map[int64]int64{0: 0}
	for k := range int64(3) {
		j.put(k+100, k)
		want[k] = k + 100
		j.putMap(mapKey, k+1, k)
		wantMap[k+1] = k
		j.mustComplete(barrier.KindSavepoint)
	}
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	checkReads(t, j, "after the savepoints", want, wantMap)
	for name, round := range rounds {
		tbl, _ := j.backends[0].Table(name)
		earliest, _, err := tbl.EarliestSnapshotID()
		if err != nil {
			t.Fatal(err)
		}
		if earliest <= round {
			t.Fatalf("seed %d: table %q: earliest snapshot %d: the round snapshot %d of the aborted checkpoint %d is still pinned", seed, name, earliest, round, id)
		}
	}
	j.checkNoLeaks()
	return seen
}
