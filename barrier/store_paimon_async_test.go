package barrier_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// asyncKeys is the key space of the asynchronous-phase tests: every key
// below it is read back, so a row that should be absent is checked too.
const asyncKeys = 120

// checkReads reads every key of the key space and the entries of map key
// mapKey against the models.
func checkReads(t *testing.T, j *maintJob, when string, want map[int64]int64, wantMap map[int64]int64) {
	t.Helper()
	for k := range int64(asyncKeys) {
		v, ok := want[k]
		if !ok {
			v = -1
		}
		if got := j.get(k)[0]; got != v {
			t.Fatalf("%s: key %d reads %d, want %d", when, k, got, v)
		}
	}
	if wantMap != nil {
		if got := j.getMap(mapKey); !maps.Equal(got, wantMap) {
			t.Fatalf("%s: map entries of key %d: %v, want %v", when, mapKey, got, wantMap)
		}
	}
}

const mapKey = 3

// startPhase sends checkpoint id's barrier to task 0 and waits for its
// SyncDone, which must report no failure.
func startPhase(t *testing.T, j *maintJob, id barrier.CheckpointID) {
	t.Helper()
	tk := j.tasks[0]
	j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID()})
	sd, err := actors.Expect[*barrier.SyncDone](tk.syncs)
	if err != nil || sd.ID != id || sd.Err != nil {
		t.Fatalf("sync phase of checkpoint %d: %v %v", id, err, sd)
	}
}

// runUntilTrace runs the simulation until its trace holds line.
func runUntilTrace(t *testing.T, j *maintJob, trace *strings.Builder, line string) {
	t.Helper()
	if err := j.sim.RunUntil(func() bool { return strings.Contains(trace.String(), line) }); err != nil {
		t.Fatalf("waiting for %q: %v", line, err)
	}
}

// traceLine is the first line of the trace that holds part, or "".
func traceLine(trace *strings.Builder, part string) string {
	for l := range strings.Lines(trace.String()) {
		if strings.Contains(l, part) {
			return strings.TrimSuffix(l, "\n")
		}
	}
	return ""
}

// The subtask works while its checkpoint's phase goes on: after SyncDone it
// reads every row of the interval (through the frozen layer) and writes the
// next interval's rows, between the commit, the round, the listing and the
// links; each read sees the newest row. The checkpoint holds exactly the
// rows at its barrier (a restore from it reads them), the next one the rows
// written during the phase.
func TestPaimonSubtaskWorksDuringAsyncPhase(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2, sim: 21}, trace: &trace})
	want, wantMap := map[int64]int64{}, map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.putMap(mapKey, 0, 0)
	wantMap[0] = 0
	base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
	for k := int64(0); k < 100; k += 2 {
		j.put(k+1000, k)
		want[k] = k + 1000
	}
	j.putMap(mapKey, 1, 1)
	wantMap[1] = 1
	atBarrier, mapAtBarrier := maps.Clone(want), maps.Clone(wantMap)

	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	checkReads(t, j, "right after SyncDone", want, wantMap)
	for i, point := range []string{
		"store-0 *barrier.paimonCommitted id=%d",
		"store-0 *barrier.tableRound table=v id=%d",
		"store-0 *barrier.paimonPrepared id=%d",
		"store-0 *barrier.paimonLinked id=%d",
	} {
		line := fmt.Sprintf(point, id)
		runUntilTrace(t, j, &trace, line)
		when := "after " + line
		checkReads(t, j, when, want, wantMap)
		for k := int64(i); k < asyncKeys; k += 7 {
			v := int64(i+1)*10_000 + k
			j.put(v, k)
			want[k] = v
		}
		j.putMap(mapKey, int64(i+2), int64(i))
		wantMap[int64(i+2)] = int64(i)
		checkReads(t, j, when+" and the next interval's writes", want, wantMap)
	}
	err, blob := j.await(id)
	if err != nil {
		t.Fatalf("checkpoint %d: %v", id, err)
	}
	c2 := outcome{id: id, blob: blob, ups: j.uploadStats(id)}
	base = checkPaimonCheckpoint(t, j, c2, base)
	checkReads(t, j, "after checkpoint 2", want, wantMap)
	c3 := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, c3, base)
	checkReads(t, j, "after checkpoint 3", want, wantMap)
	m2, m3 := j.metadata(c2), j.metadata(c3)
	j.stop()

	r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2, sim: 22}, restore: m2})
	checkReads(t, r, "restored from checkpoint 2", atBarrier, mapAtBarrier)
	r.stop()
	r = startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2, sim: 23}, restore: m3})
	checkReads(t, r, "restored from checkpoint 3", want, wantMap)
}

// A checkpoint aborted after its SyncDone still gets its commit and its
// rounds (the table is the store's live state), wherever the abort falls;
// only its upload never starts. The store reads every row throughout, the
// next barrier moves the reads to the aborted checkpoint's rounds, and the
// next checkpoint is incremental.
func TestPaimonAbortAfterSyncDone(t *testing.T) {
	for i, point := range []string{
		"", // before the commit's result
		"store-0/paimon-v *barrier.agentRound id=%d", // while the round is asked for
		"store-0 *barrier.paimonPrepared id=%d",      // while the links are made
	} {
		t.Run(fmt.Sprintf("point=%d", i), func(t *testing.T) {
			var trace strings.Builder
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: uint64(3 + i)}, trace: &trace})
			want := map[int64]int64{}
			for k := range int64(100) {
				j.put(k, k)
				want[k] = k
			}
			base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
			for k := range int64(100) {
				j.put(k+1, k)
				want[k] = k + 1
			}
			id := j.trigger(barrier.KindCheckpoint)
			startPhase(t, j, id)
			if point != "" {
				runUntilTrace(t, j, &trace, fmt.Sprintf(point, id))
			}
			j.sys.Send(j.tasks[0].relay, &barrier.Aborted{ID: id, Err: errors.New("aborted by the test")})
			checkReads(t, j, "after the abort", want, nil)
			if err, _ := j.await(id); err == nil {
				t.Fatalf("checkpoint %d completed", id)
			}
			j.settle()
			l := traceLine(&trace, fmt.Sprintf("store-0 *barrier.tableRound table=v id=%d ", id))
			var round int64
			if _, err := fmt.Sscanf(l[strings.Index(l, "snapshot="):], "snapshot=%d err=<nil>", &round); err != nil || !strings.HasSuffix(l, "err=<nil>") {
				t.Fatalf("the round of the aborted checkpoint %d: %q", id, l)
			}
			if hasPrefix(blobs.names(), fmt.Sprintf("shared/chk-%d/", id)) || strings.Contains(trace.String(), fmt.Sprintf("*barrier.Upload id=%d ", id)) {
				t.Fatalf("the aborted checkpoint %d uploaded", id)
			}
			checkReads(t, j, "after the aborted phase", want, nil)
			c := j.mustComplete(barrier.KindCheckpoint)
			checkPaimonCheckpoint(t, j, c, base)
			if pin := fmt.Sprintf("store-0/paimon-v *barrier.agentPinView snapshot=%d next=false", round); !strings.Contains(trace.String(), pin) {
				t.Fatalf("the next barrier did not move the reads to the aborted checkpoint's round (%q)", pin)
			}
			checkReads(t, j, "after the next checkpoint", want, nil)
			j.checkNoLeaks()
		})
	}
}

// A failed commit declines its checkpoint after SyncDone; the frozen rows
// stay readable, the next barrier's release keeps them and its freeze takes
// them in under the newer rows, so the next checkpoint holds them: a restore
// from it reads every row.
func TestPaimonCommitFailureFoldsIntoNextCheckpoint(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 5}, trace: &trace})
	want, wantMap := map[int64]int64{}, map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.putMap(mapKey, 0, 0)
	wantMap[0] = 0
	base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	for k := int64(0); k < asyncKeys; k += 3 {
		j.put(k+500, k)
		want[k] = k + 500
	}
	j.putMap(mapKey, 1, 1)
	wantMap[1] = 1
	// The data commit is the only writer once maintenance is idle, and the
	// freeze writes nothing.
	fs.failOn("create", func(p string) bool { return strings.Contains(p, "/bucket-") })
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	runUntilTrace(t, j, &trace, fmt.Sprintf("store-0 *barrier.paimonCommitted id=%d", id))
	fs.failOn("create", nil)
	if strings.Contains(trace.String(), fmt.Sprintf("store-0 *barrier.paimonCommitted id=%d tables=0 err=<nil>", id)) ||
		!strings.Contains(trace.String(), fmt.Sprintf("store-0 *barrier.paimonCommitted id=%d tables=0 err=", id)) {
		t.Fatalf("the commit of checkpoint %d did not fail", id)
	}
	checkReads(t, j, "after the failed commit", want, wantMap)
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its commit", id)
	}
	checkReads(t, j, "after the declined checkpoint", want, wantMap)
	for k := int64(1); k < asyncKeys; k += 5 {
		j.put(k+900, k)
		want[k] = k + 900
	}
	c3 := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, c3, base)
	checkReads(t, j, "after checkpoint 3", want, wantMap)
	m3 := j.metadata(c3)
	j.checkNoLeaks()
	j.stop()

	r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 6}, restore: m3})
	checkReads(t, r, "restored from checkpoint 3", want, wantMap)
}

// A failed round after SyncDone declines its checkpoint; the next barrier
// releases the frozen rows with ok=false and the next commit writes them
// again, so a restore from the next checkpoint reads every row.
func TestPaimonRoundFailureFoldsIntoNextCheckpoint(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 8}, trace: &trace})
	want := map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.mustComplete(barrier.KindCheckpoint)
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	for k := range int64(100) {
		j.put(k+1, k)
		want[k] = k + 1
	}
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	runUntilTrace(t, j, &trace, fmt.Sprintf("store-0/paimon-v *barrier.agentRound id=%d", id))
	// The round's deletion-vector file cannot be written.
	fs.failOn("create", func(p string) bool { return strings.Contains(p, "/index/") })
	runUntilTrace(t, j, &trace, fmt.Sprintf("store-0 *barrier.tableRound table=v id=%d", id))
	fs.failOn("create", nil)
	if !strings.Contains(trace.String(), fmt.Sprintf("store-0 *barrier.tableRound table=v id=%d snapshot=0 err=", id)) {
		t.Fatalf("the round of checkpoint %d did not fail", id)
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its round", id)
	}
	checkReads(t, j, "after the failed round", want, nil)
	j.put(7000, 110)
	want[110] = 7000
	c3 := j.mustComplete(barrier.KindCheckpoint)
	checkReads(t, j, "after checkpoint 3", want, nil)
	m3 := j.metadata(c3)
	j.checkNoLeaks()
	j.stop()

	r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 9}, restore: m3})
	checkReads(t, r, "restored from checkpoint 3", want, nil)
}

// A crash of the Store actor (and with it the maintenance) between the
// freeze and the commit, or between the commit and the round, loses nothing
// a completed checkpoint holds: a restore from the last completed
// checkpoint reads exactly its rows, none of the frozen interval's.
func TestPaimonCrashDuringAsyncPhaseRestoresExactly(t *testing.T) {
	for i, point := range []string{
		"store-0 *barrier.paimonFrozen id=%d",    // the commit job is out
		"store-0 *barrier.paimonCommitted id=%d", // the round is asked for
	} {
		t.Run(fmt.Sprintf("point=%d", i), func(t *testing.T) {
			var trace strings.Builder
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: uint64(30 + i)}, trace: &trace})
			want, wantMap := map[int64]int64{}, map[int64]int64{}
			for k := range int64(100) {
				j.put(k, k)
				want[k] = k
			}
			j.putMap(mapKey, 0, 0)
			wantMap[0] = 0
			c1 := j.mustComplete(barrier.KindCheckpoint)
			for k := int64(0); k < asyncKeys; k += 2 {
				j.put(k+100, k)
			}
			j.putMap(mapKey, 1, 1)
			id := j.trigger(barrier.KindCheckpoint)
			startPhase(t, j, id)
			runUntilTrace(t, j, &trace, fmt.Sprintf(point, id))
			if n := j.sim.Crash(j.tasks[0].pid); n == 0 {
				t.Fatal("nothing crashed")
			}
			j.tasks[0].pid = actor.NewPID(j.coord.Address, "crashed")
			if err, _ := j.await(id); err == nil {
				t.Fatalf("checkpoint %d completed without its store", id)
			}
			m1 := j.metadata(c1)
			j.stop()

			r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: uint64(40 + i), restoreLatest: true}, restore: m1})
			if l := r.recovered.Latest; l == nil || l.ID != c1.id {
				t.Fatalf("recovery found %v, want checkpoint %d", l, c1.id)
			}
			checkReads(t, r, "restored from checkpoint 1", want, wantMap)
			r.put(5, 5)
			want[5] = 5
			r.mustComplete(barrier.KindCheckpoint)
			checkReads(t, r, "after the first checkpoint of the restored job", want, wantMap)
		})
	}
}

// Barrier(n+1) right after SyncDone(n) waits, the store lent, until n's
// rounds are known: its release pins them. Both checkpoints complete, each
// with exactly its interval's rows.
func TestPaimonNextBarrierWaitsForRounds(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 3, concurrent: 2, sim: 12}, trace: &trace})
	want, wantMap := map[int64]int64{}, map[int64]int64{}
	for k := range int64(100) {
		j.put(k, k)
		want[k] = k
	}
	j.putMap(mapKey, 0, 0)
	wantMap[0] = 0
	j.mustComplete(barrier.KindCheckpoint)
	for k := int64(0); k < 100; k += 2 {
		j.put(k+200, k)
		want[k] = k + 200
	}
	j.putMap(mapKey, 1, 1)
	wantMap[1] = 1
	at2, mapAt2 := maps.Clone(want), maps.Clone(wantMap)
	id2 := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id2)
	for k := int64(1); k < asyncKeys; k += 3 {
		j.put(k+300, k)
		want[k] = k + 300
	}
	j.putMap(mapKey, 1, 2)
	wantMap[1] = 2
	id3 := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id3)
	frozen := strings.Index(trace.String(), fmt.Sprintf("store-0 *barrier.paimonFrozen id=%d ", id3))
	for _, tbl := range []string{"v", "m"} {
		round := strings.Index(trace.String(), fmt.Sprintf("store-0 *barrier.tableRound table=%s id=%d ", tbl, id2))
		if round < 0 || round > frozen {
			t.Fatalf("checkpoint %d froze before the round of table %q of checkpoint %d", id3, tbl, id2)
		}
	}
	checkReads(t, j, "during both phases", want, wantMap)
	var metas []*barrier.Metadata
	for _, id := range []barrier.CheckpointID{id2, id3} {
		err, blob := j.await(id)
		if err != nil {
			t.Fatalf("checkpoint %d: %v", id, err)
		}
		metas = append(metas, j.metadata(outcome{id: id, blob: blob}))
	}
	checkReads(t, j, "after both checkpoints", want, wantMap)
	j.checkNoLeaks()
	j.stop()
	for i, m := range metas {
		r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 3, sim: uint64(13 + i)}, restore: m})
		if i == 0 {
			checkReads(t, r, "restored from checkpoint 2", at2, mapAt2)
		} else {
			checkReads(t, r, "restored from checkpoint 3", want, wantMap)
		}
		r.stop()
	}
}

// On the real system the phase's commit, round, listing and links run on
// other goroutines while the subtask reads and writes every key and map
// entry right after SyncDone (under -race: the store's reads beside the
// frozen flush's commit); every read sees the newest row, and every
// checkpoint completes.
func TestPaimonSubtaskWorksDuringAsyncPhaseConcurrently(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1}})
	want, wantMap := map[int64]int64{}, map[int64]int64{}
	for round := range int64(8) {
		for k := round % 3; k < asyncKeys; k += 3 {
			j.put(round*1000+k, k)
			want[k] = round*1000 + k
		}
		id := j.trigger(barrier.KindCheckpoint)
		startPhase(t, j, id)
		checkReads(t, j, fmt.Sprintf("right after SyncDone(%d)", id), want, wantMap)
		for k := (round + 1) % 4; k < asyncKeys; k += 4 {
			j.put(round*1000+500+k, k)
			want[k] = round*1000 + 500 + k
		}
		j.putMap(mapKey, round, round)
		wantMap[round] = round
		checkReads(t, j, fmt.Sprintf("during the phase of %d", id), want, wantMap)
		if err, _ := j.await(id); err != nil {
			t.Fatalf("checkpoint %d: %v", id, err)
		}
		checkReads(t, j, fmt.Sprintf("after checkpoint %d", id), want, wantMap)
	}
	j.checkNoLeaks()
}

// Drain waits for the whole asynchronous phase: asked right after SyncDone,
// the Store actor answers only once the checkpoint's upload is over.
func TestPaimonDrainWaitsForAsyncPhase(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 17}, trace: &trace})
	for k := range int64(100) {
		j.put(k, k)
	}
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	if strings.Contains(trace.String(), fmt.Sprintf("store-0 *barrier.UploadDone id=%d ", id)) {
		t.Fatalf("checkpoint %d's upload ended before the test could ask for a drain", id)
	}
	j.sys.Request(j.tasks[0].relay, &barrier.Drain{}, j.ctl.PID())
	if _, err := actors.Expect[*barrier.Drained](j.ctl); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"paimonCommitted", "tableRound table=v", "paimonLinked", "UploadDone"} {
		if l := fmt.Sprintf("store-0 *barrier.%s id=%d ", step, id); !strings.Contains(trace.String(), l) {
			t.Fatalf("drained before %q", l)
		}
	}
	if err, _ := j.await(id); err != nil {
		t.Fatalf("checkpoint %d: %v", id, err)
	}
}

// A state registered while a phase runs (the subtask owns its store again
// after SyncDone) is not read behind its back: the phase works from the
// tables its freeze saw, and the next barrier's freeze takes the new one in.
func TestPaimonStateRegisteredDuringAsyncPhase(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1}})
	want := map[int64]int64{}
	for k := range int64(asyncKeys) {
		j.put(k, k)
		want[k] = k
	}
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	late := subtask.Layout{Name: "late", Kind: subtask.KindValue,
		Key: []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}}, Value: []subtask.Column{{Name: "v", Type: table.BigInt()}}}
	tk := j.owner(7)
	lv, err := tk.store.Value(late)
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := j.await(id); err != nil {
		t.Fatalf("checkpoint %d: %v", id, err)
	}
	lv.Put(keyOf(7, j.cfg.maxP), subtask.Row{subtask.Int(70)})
	tk.store.EndBatch()
	c := j.mustComplete(barrier.KindCheckpoint)
	held := false
	for _, op := range j.metadata(c).Operators {
		for _, st := range op.Subtasks {
			held = held || slices.ContainsFunc(st.Tables, func(ts barrier.TableState) bool { return ts.Name == "late" })
		}
	}
	if !held {
		t.Fatalf("checkpoint %d holds no table of the state registered during checkpoint %d's phase", c.id, id)
	}
	checkReads(t, j, "after the next checkpoint", want, nil)
}

// A phase whose round failed on one table ends only once every other
// table's round answered: until then a maintainer still writes into its
// table, so Drained must not go before it.
func TestPaimonFailedRoundEndsAfterEveryRound(t *testing.T) {
	ordered := 0
	for seed := uint64(10); seed < 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if failedRoundDrains(t, seed) {
				ordered++
			}
		})
	}
	if ordered == 0 {
		t.Fatal("no seed failed table v's round while table m's was out")
	}
}

// failedRoundDrains runs one schedule; it reports false when the schedule
// does not fail table v's round while table m's is still out.
func failedRoundDrains(t *testing.T, seed uint64) bool {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: seed}, trace: &trace})
	for k := range int64(100) {
		j.put(k, k)
	}
	j.putMap(mapKey, 0, 0)
	j.mustComplete(barrier.KindCheckpoint)
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	for k := range int64(100) {
		j.put(k+1, k)
	}
	j.putMap(mapKey, 1, 1)
	id := j.trigger(barrier.KindCheckpoint)
	startPhase(t, j, id)
	runUntilTrace(t, j, &trace, fmt.Sprintf("store-0/paimon-v *barrier.agentRound id=%d", id))
	fs.failOn("create", func(p string) bool { return strings.Contains(p, "/v/") && strings.Contains(p, "/index/") })
	failed := fmt.Sprintf("store-0 *barrier.tableRound table=v id=%d snapshot=0 err=", id)
	err := j.sim.RunUntil(func() bool { return strings.Contains(trace.String(), failed) })
	fs.failOn("create", nil)
	other := fmt.Sprintf("store-0 *barrier.tableRound table=m id=%d", id)
	if err != nil || strings.Contains(trace.String(), other) {
		return false
	}
	j.sys.Request(j.tasks[0].relay, &barrier.Drain{}, j.ctl.PID())
	if _, err := actors.Expect[*barrier.Drained](j.ctl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(trace.String(), other) {
		t.Fatalf("drained while table m's round of checkpoint %d was still out", id)
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its round", id)
	}
	return true
}
