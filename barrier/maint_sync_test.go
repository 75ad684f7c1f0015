package barrier_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
)

// checkPaimonCheckpoint checks that checkpoint o of a paimon job holds, per
// table, exactly the files of one snapshot (the one the subtask now reads),
// that it uploaded exactly the files its base (the files of base, the last
// confirmed checkpoint) lacks and referenced the others at base's blobs,
// and that its sync phase reported those bytes.
func checkPaimonCheckpoint(t *testing.T, j *maintJob, o outcome, base map[string]barrier.FileRef) map[string]barrier.FileRef {
	t.Helper()
	m := j.metadata(o)
	op, _ := m.Operator(opID)
	st := op.Subtasks[0]
	if st.Backend != barrier.BackendPaimon {
		t.Fatalf("checkpoint %d: backend %q", o.id, st.Backend)
	}
	cur := fileSet(m, 0)
	for _, ts := range st.Tables {
		want := map[string]bool{}
		for _, p := range j.snapshotFiles(0, ts.Name, ts.SnapshotID) {
			want[p] = true
		}
		got := map[string]bool{}
		for _, f := range ts.Files {
			got[f.Path] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("checkpoint %d table %q: files\n%v\nsnapshot %d has\n%v", o.id, ts.Name, got, ts.SnapshotID, want)
		}
	}
	var created int64
	for p, f := range cur {
		b, existed := base[p]
		switch {
		case existed && f.Uploaded:
			t.Fatalf("checkpoint %d re-uploads %s", o.id, p)
		case !existed && !f.Uploaded:
			t.Fatalf("checkpoint %d references %s, which its base lacks", o.id, p)
		case existed && f.Blob != b.Blob:
			t.Fatalf("checkpoint %d resolves %s to %s, its base has %s", o.id, p, f.Blob, b.Blob)
		}
		if !existed {
			created += f.Size
		}
	}
	if sd := o.ups[0]; sd.UploadBytes != created {
		t.Fatalf("checkpoint %d uploaded %d bytes; files created since the last confirmed checkpoint: %d", o.id, sd.UploadBytes, created)
	}
	return cur
}

// A paimon store through several checkpoints of value and map states: each
// checkpoint is one snapshot per table, uploads exactly the files created
// since the last confirmed checkpoint, and reads see every row afterwards
// (the subtask reads the round's snapshot: deletion-vector reads skip level 0).
func TestPaimonCheckpointsUploadOnlyNewFiles(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2}})
	want := map[int64]int64{}
	var base map[string]barrier.FileRef
	for round := range int64(5) {
		for k := range int64(300) {
			if (k+round)%3 != 0 {
				continue
			}
			j.put(round*1000+k, k)
			want[k] = round*1000 + k
			j.putMap(k%7, round, k)
		}
		o := j.mustComplete(barrier.KindCheckpoint)
		base = checkPaimonCheckpoint(t, j, o, base)
		if round > 0 && o.ups[0].Reused == 0 {
			t.Fatalf("checkpoint %d reused nothing", o.id)
		}
		for k, v := range want {
			if got := j.get(k)[0]; got != v {
				t.Fatalf("after checkpoint %d: key %d reads %d, want %d", o.id, k, got, v)
			}
		}
		if got := j.getMap(3); len(got) != int(round)+1 {
			t.Fatalf("after checkpoint %d: map entries of key 3: %v", o.id, got)
		}
	}
	j.checkNoLeaks()
}

// An aborted checkpoint's uploads are never a reuse base: after checkpoint
// 2's upload fails, checkpoint 3 references only checkpoint 1's files.
func TestPaimonAbortedCheckpointIsNotReused(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2}})
	for k := range int64(200) {
		j.put(k, k)
	}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	base := checkPaimonCheckpoint(t, j, c1, nil)
	for k := range int64(100) {
		j.put(k+1, k)
	}
	f := blobs.inject(&blobFault{op: "put", match: func(n string) bool { return strings.HasPrefix(n, "shared/chk-2/") }})
	if o := j.checkpoint(barrier.KindCheckpoint); o.err == nil || f.hits == 0 {
		t.Fatalf("checkpoint 2 with failing uploads: %v", o.err)
	}
	blobs.clearFaults()
	j.put(1000, 7)
	c3 := j.mustComplete(barrier.KindCheckpoint)
	cur := checkPaimonCheckpoint(t, j, c3, base)
	for p, f := range cur {
		if strings.Contains(f.Blob, "chk-2/") {
			t.Fatalf("checkpoint 3 names %s of aborted checkpoint 2 (%s)", f.Blob, p)
		}
	}
	if got := j.get(7, 8, 150)[0:3]; got[0] != 1000 || got[1] != 9 || got[2] != 150 {
		t.Fatalf("reads after checkpoint 3: %v", got)
	}
	j.checkNoLeaks()
}

// A failed maintenance round declines its checkpoint after the subtask
// resumed: its reads see the frozen rows all along, and the next barrier's
// release keeps them for its freeze, whose commit writes them again; the
// next checkpoint's round takes them in.
func TestPaimonRoundFailureDeclines(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1}})
	for k := range int64(100) {
		j.put(k, k)
	}
	base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
	for k := range int64(100) {
		j.put(k+1, k)
	}
	// Overwrites make the round write a deletion-vector file; the data
	// commit writes none.
	fs.failOn("create", func(p string) bool { return strings.Contains(p, "/index/") })
	o := j.checkpoint(barrier.KindCheckpoint)
	if o.err == nil {
		t.Fatal("checkpoint 2 completed without its round")
	}
	if err := o.syncs[0].Err; err != nil {
		t.Fatalf("sync phase of checkpoint 2 (before its round): %v", err)
	}
	for k := range int64(100) {
		if got := j.get(k)[0]; got != k+1 {
			t.Fatalf("key %d reads %d after the failed round, want %d", k, got, k+1)
		}
	}
	fs.failOn("create", nil)
	o3 := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, o3, base)
	for k := range int64(100) {
		if got := j.get(k)[0]; got != k+1 {
			t.Fatalf("key %d reads %d after checkpoint 3, want %d", k, got, k+1)
		}
	}
	j.checkNoLeaks()
}

// checkViewFiles checks that every file of the snapshot each table of task
// 0 reads (the last checkpoint's round snapshot) is on disk.
func checkViewFiles(t *testing.T, j *maintJob, o outcome) {
	t.Helper()
	op, _ := j.metadata(o).Operator(opID)
	for _, ts := range op.Subtasks[0].Tables {
		tbl, _ := j.backends[0].Table(ts.Name)
		for _, p := range j.snapshotFiles(0, ts.Name, ts.SnapshotID) {
			if _, err := j.fs.Stat(path.Join(tbl.Dir(), p)); err != nil {
				t.Fatalf("after checkpoint %d: table %q: file %s of the read snapshot %d: %v", o.id, ts.Name, p, ts.SnapshotID, err)
			}
		}
	}
}

// The snapshot a subtask reads between barriers stays pinned while the
// maintenance shapes the table and expires every snapshot it may (one
// retained): each checkpoint in a simulation is followed by all the
// maintenance there is to do, and the read snapshot's files are all there.
// The seed replays to the same trace.
func TestPaimonReadViewPinnedAcrossShaping(t *testing.T) {
	if a, b := readViewRun(t), readViewRun(t); a != b {
		t.Fatalf("seed 7: trace hashes %x and %x differ; replay: go test ./barrier -run TestPaimonReadViewPinnedAcrossShaping", a, b)
	}
}

func readViewRun(t *testing.T) uint64 {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{
		jobConfig: jobConfig{retain: 1, sim: 7},
		maint:     compaction.Config{RetainSnapshots: 1, ExpireEvery: 1},
		trace:     &trace,
	})
	want := map[int64]int64{}
	for round := range int64(12) {
		for k := range int64(60) {
			key := (k*7 + round*13) % 200
			j.put(round*1000+k, key)
			want[key] = round*1000 + k
		}
		o := j.mustComplete(barrier.KindCheckpoint)
		if err := j.sim.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		checkViewFiles(t, j, o)
		for k, v := range want {
			if got := j.get(k)[0]; got != v {
				t.Fatalf("after checkpoint %d: key %d reads %d, want %d", o.id, k, got, v)
			}
		}
	}
	tbl, _ := j.backends[0].Table(valueLayout.Name)
	if earliest, _, _ := tbl.EarliestSnapshotID(); earliest < 10 {
		t.Fatalf("earliest snapshot %d: expiration did not run", earliest)
	}
	if shaped := strings.Count(trace.String(), "/paimon-v/maint-1 *compaction.jobDone"); shaped < 12 {
		t.Fatalf("%d maintenance jobs: too few to shape the table", shaped)
	}
	hash := j.sim.TraceHash()
	j.stop()
	return hash
}

// A maintainer that crashes is replaced, and the new one gets the pins of
// the old one back (the read snapshot's, under the key above every
// checkpoint, and the snapshot the next barrier moves the reads to, under
// the key below it); checkpoints go on incrementally, and a checkpoint whose
// round the crash cut off is declined.
func TestPaimonMaintainerRestartRepins(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{
		jobConfig: jobConfig{retain: 1, sim: 11},
		maint:     compaction.Config{RetainSnapshots: 1},
		trace:     &trace,
	})
	for k := range int64(100) {
		j.put(k, k)
	}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	base := checkPaimonCheckpoint(t, j, c1, nil)
	op, _ := j.metadata(c1).Operator(opID)
	view := op.Subtasks[0].Tables[0].SnapshotID
	// The barrier of the next checkpoint moves the reads to checkpoint 1's
	// round snapshot.
	j.put(100, 100)
	c1b := j.mustComplete(barrier.KindCheckpoint)
	base = checkPaimonCheckpoint(t, j, c1b, base)
	op, _ = j.metadata(c1b).Operator(opID)
	next := op.Subtasks[0].Tables[0].SnapshotID
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	maint := actor.NewPID(j.coord.Address, "store-0/paimon-v/maint-1")
	if n := j.sim.Crash(maint); n != 1 {
		t.Fatalf("crashed %d actors", n)
	}
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	for _, repin := range []string{
		fmt.Sprintf("store-0/paimon-v/maint-3 *compaction.Pin chk=%d snapshot=%d", int64(math.MaxInt64), view),
		fmt.Sprintf("store-0/paimon-v/maint-3 *compaction.Pin chk=%d snapshot=%d", int64(math.MaxInt64-1), next),
	} {
		if !strings.Contains(trace.String(), repin) {
			t.Fatalf("the new maintainer never got the pin %q", repin)
		}
	}
	for k := range int64(50) {
		j.put(k+1, k)
	}
	c2 := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, c2, base)
	checkViewFiles(t, j, c2)
	if got := j.get(0, 49, 50); got[0] != 1 || got[1] != 50 || got[2] != 50 {
		t.Fatalf("reads after checkpoint 2: %v", got)
	}

	// A crash while the round of checkpoint 3 waits in the maintainer's
	// mailbox (the agent has just asked for it).
	j.put(9, 9)
	id := j.trigger(barrier.KindCheckpoint)
	j.sys.Send(j.tasks[0].relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: j.tasks[0].store, ReplyTo: j.tasks[0].syncs.PID()})
	if err := j.sim.RunUntil(func() bool {
		return strings.Contains(trace.String(), fmt.Sprintf("store-0/paimon-v *barrier.agentRound id=%d", id))
	}); err != nil {
		t.Fatal(err)
	}
	j.sim.Crash(actor.NewPID(j.coord.Address, "store-0/paimon-v/maint-3"))
	sd, err := actors.Expect[*barrier.SyncDone](j.tasks[0].syncs)
	if err != nil || sd.Err != nil {
		t.Fatalf("sync phase of checkpoint %d (over before its round): %v %v", id, err, sd)
	}
	if got := j.get(9)[0]; got != 9 {
		t.Fatalf("key 9 reads %d while the round of checkpoint %d is cut off", got, id)
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its round", id)
	}
	c4 := j.mustComplete(barrier.KindCheckpoint)
	checkViewFiles(t, j, c4)
	if got := j.get(9, 0); got[0] != 9 || got[1] != 1 {
		t.Fatalf("reads after checkpoint 4: %v", got)
	}

	// A crash right after the round ran: its answer reaches the agent
	// after the maintainer's Terminated, which already failed the round.
	j.put(10, 10)
	id = j.trigger(barrier.KindCheckpoint)
	j.sys.Send(j.tasks[0].relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: j.tasks[0].store, ReplyTo: j.tasks[0].syncs.PID()})
	if err := j.sim.RunUntil(func() bool {
		return strings.Contains(trace.String(), fmt.Sprintf("store-0/paimon-v/maint-4 *compaction.Barrier chk=%d", id))
	}); err != nil {
		t.Fatal(err)
	}
	j.sim.Crash(actor.NewPID(j.coord.Address, "store-0/paimon-v/maint-4"))
	if sd, err = actors.Expect[*barrier.SyncDone](j.tasks[0].syncs); err != nil || sd.Err != nil {
		t.Fatalf("sync phase of checkpoint %d (over before its round): %v %v", id, err, sd)
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed without its round's answer", id)
	}
	c6 := j.mustComplete(barrier.KindCheckpoint)
	checkViewFiles(t, j, c6)
	if got := j.get(10, 9); got[0] != 10 || got[1] != 9 {
		t.Fatalf("reads after checkpoint 6: %v", got)
	}
	j.checkNoLeaks()
}

// On the real system the subtask's flush (an APPEND commit) runs while the
// maintainer's shaping steps commit to the same table on other goroutines:
// checkpoints back to back, each with updates spread over the key space, all
// complete with the maintenance invariants checked after every round, and
// every key reads its newest value.
func TestPaimonFlushRacesShaping(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{
		jobConfig: jobConfig{retain: 1},
		maint:     compaction.Config{RetainSnapshots: 2},
	})
	want := map[int64]int64{}
	var base map[string]barrier.FileRef
	for round := range int64(15) {
		for k := range int64(80) {
			key := (k*37 + round*11) % 500
			j.put(round*1000+k, key)
			want[key] = round*1000 + k
		}
		o := j.mustComplete(barrier.KindCheckpoint)
		base = checkPaimonCheckpoint(t, j, o, base)
	}
	for k, v := range want {
		if got := j.get(k)[0]; got != v {
			t.Fatalf("key %d reads %d, want %d", k, got, v)
		}
	}
	j.checkNoLeaks()
	// One data commit and one round per checkpoint; the rest is shaping.
	tbl, _ := j.backends[0].Table(valueLayout.Name)
	if latest, _, _ := tbl.LatestSnapshotID(); latest <= 2*15 {
		t.Fatalf("%d snapshots: no shaping step committed", latest)
	}
}

// A savepoint of a paimon store uploads every file of its snapshots to its
// own directory and leaves the reuse base alone: the checkpoint after it
// references the first checkpoint's files.
func TestPaimonSavepointKeepsNextCheckpointIncremental(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1}})
	for k := range int64(200) {
		j.put(k, k)
		j.putMap(k%5, k, k)
	}
	base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
	j.put(1, 300)
	sp := j.mustComplete(barrier.KindSavepoint)
	if sd := sp.ups[0]; sd.Reused != 0 || sd.Uploads == 0 {
		t.Fatalf("savepoint: %d uploads, %d reused", sd.Uploads, sd.Reused)
	}
	for p, f := range fileSet(j.metadata(sp), 0) {
		if !f.Uploaded || !strings.HasPrefix(f.Blob, fmt.Sprintf("savepoint-%d/", sp.id)) {
			t.Fatalf("savepoint file %s in blob %s (uploaded %t)", p, f.Blob, f.Uploaded)
		}
	}
	j.put(2, 301)
	c3 := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, c3, base)
	if c3.ups[0].Reused == 0 {
		t.Fatal("the checkpoint after a savepoint reused nothing")
	}
	if got := j.get(300, 301, 5); got[0] != 1 || got[1] != 2 || got[2] != 5 {
		t.Fatalf("reads: %v", got)
	}
	j.checkNoLeaks()
}

// The maintainers expire rows with the state's TTL, on the system clock the
// store's time follows: a data file whose rows all expired leaves the
// table (and the next checkpoint), while the rows written since stay.
func TestPaimonMaintenanceUsesStateTTL(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 5, timeout: time.Hour}, ttl: 10_000})
	now := func() { j.tasks[0].store.SetNow(j.sim.Now().UnixMilli()) }
	now()
	for k := range int64(100) {
		j.put(k, k)
	}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	old := map[string]bool{}
	for p := range fileSet(j.metadata(c1), 0) {
		if strings.HasPrefix(p, "v/bucket-") {
			old[p] = true
		}
	}
	if len(old) == 0 {
		t.Fatal("checkpoint 1 has no data file")
	}
	if err := j.sim.RunFor(11 * time.Second); err != nil {
		t.Fatal(err)
	}
	now()
	for k := range int64(20) {
		j.put(k+1, 100+k)
	}
	j.mustComplete(barrier.KindCheckpoint)
	if err := j.sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	j.put(7, 500)
	c3 := j.mustComplete(barrier.KindCheckpoint)
	for p := range fileSet(j.metadata(c3), 0) {
		if old[p] {
			t.Fatalf("checkpoint 3 still holds %s, whose rows all expired", p)
		}
	}
	now()
	if got := j.get(0, 99, 100, 119, 500); got[0] != -1 || got[1] != -1 || got[2] != 1 || got[3] != 20 || got[4] != 7 {
		t.Fatalf("reads after expiry: %v", got)
	}
}

// A checkpoint aborted while its round is asked for (after its SyncDone)
// still gets its commit and round, and the next barrier moves the reads to
// the round's snapshot: the store reads every row throughout, and the next
// checkpoint is incremental.
func TestPaimonAbortDuringRoundKeepsStoreReadable(t *testing.T) {
	var trace strings.Builder
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 1, sim: 3}, trace: &trace})
	for k := range int64(100) {
		j.put(k, k)
	}
	base := checkPaimonCheckpoint(t, j, j.mustComplete(barrier.KindCheckpoint), nil)
	for k := range int64(100) {
		j.put(k+1, k)
	}
	id := j.trigger(barrier.KindCheckpoint)
	tk := j.tasks[0]
	j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID()})
	if err := j.sim.RunUntil(func() bool {
		return strings.Contains(trace.String(), fmt.Sprintf("store-0/paimon-v *barrier.agentRound id=%d", id))
	}); err != nil {
		t.Fatal(err)
	}
	sd, err := actors.Expect[*barrier.SyncDone](tk.syncs)
	if err != nil || sd.Err != nil {
		t.Fatalf("sync phase of checkpoint %d: %v %v", id, err, sd)
	}
	j.sys.Send(tk.relay, &barrier.Aborted{ID: id, Err: errors.New("aborted by the test")})
	for k := range int64(100) {
		if got := j.get(k)[0]; got != k+1 {
			t.Fatalf("key %d reads %d after the aborted checkpoint, want %d", k, got, k+1)
		}
	}
	if err, _ := j.await(id); err == nil {
		t.Fatalf("checkpoint %d completed", id)
	}
	c := j.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, j, c, base)
	j.checkNoLeaks()
}

// Checkpoints the Store actor took restore (A2's RestoreSubtask): aligned,
// the restored store reads every row and its first checkpoint references
// the adopted files; rescaled to two subtasks, every row reads at its new
// owner and checkpoints go on.
func TestPaimonStoreActorCheckpointsRestore(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2}})
	want := map[int64]int64{}
	for round := range int64(3) {
		for k := range int64(150) {
			if (k+round)%2 == 0 {
				j.put(round*1000+k, k)
				want[k] = round*1000 + k
			}
			j.putMap(k%4, k, round)
		}
		j.mustComplete(barrier.KindCheckpoint)
	}
	m := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	check := func(r *maintJob) {
		t.Helper()
		for k, v := range want {
			if got := r.get(k)[0]; got != v {
				t.Fatalf("restored key %d reads %d, want %d", k, got, v)
			}
		}
		if got := r.getMap(1); len(got) != 150/4+1 || got[149] != 2 {
			t.Fatalf("restored map entries of key 1: %v", got)
		}
	}
	j.stop()

	r := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2}, restore: m})
	check(r)
	r.put(5000, 3)
	want[3] = 5000
	o := r.mustComplete(barrier.KindCheckpoint)
	checkPaimonCheckpoint(t, r, o, fileSet(m, 0))
	if o.ups[0].Reused == 0 {
		t.Fatal("the first checkpoint after an aligned restore reused nothing")
	}
	check(r)
	m2 := r.metadata(o)
	r.stop()

	s := startMaintJob(t, blobs, fs, root, maintConfig{jobConfig: jobConfig{retain: 2, parallelism: 2}, restore: m2})
	check(s)
	s.put(6000, 4)
	want[4] = 6000
	s.mustComplete(barrier.KindCheckpoint)
	check(s)
	s.checkNoLeaks()
}
