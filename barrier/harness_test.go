package barrier_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

const opID = "agg"

// probeWait bounds each wait of a test on the real system for a message:
// well above the coordinator's checkpoint timeout, so that a checkpoint a
// loaded machine (the race detector, parallel test binaries) slows down
// ends with the coordinator's verdict rather than a probe's.
const probeWait = 3 * time.Minute

// jobConfig describes a test job: one keyed operator whose subtasks keep a
// value state over the given backend, a coordinator and an uploader.
type jobConfig struct {
	backend     string
	parallelism int
	maxP        int
	retain      int
	// concurrent is the coordinator's MaxConcurrent (maintenance jobs only).
	concurrent int
	timeout    time.Duration
	// restore restores from this checkpoint (nil: the latest the coordinator
	// recovers, if restoreLatest).
	restore       *barrier.Metadata
	restoreLatest bool
	memTable      uint64
	// allShapes registers a list, a map and a time state (shapeLayouts)
	// besides the value state.
	allShapes bool
	retry     barrier.RetryPolicy
	// sim runs the job in a simulation of this seed (0: the real system).
	sim uint64
}

type job struct {
	t         testing.TB
	cfg       jobConfig
	sys       *actors.System
	sim       *actors.Sim
	blobs     *memBlobs
	fs        *faultyFS
	root      string
	coord     *actor.PID
	uploader  *actor.PID
	tasks     []*task
	ctl       *actors.Probe // Triggered, Drained, Quiet
	trig      *actors.Probe // TriggerCheckpoint
	notes     *actors.Probe // Complete, Aborted
	recovered *barrier.Recovered
	restored  []*barrier.RestoredStore
}

type task struct {
	idx     int
	kg      keygroup.Range
	workDir string
	backend subtask.Backend
	store   *subtask.Store
	values  *subtask.ValueState
	shapes  *shapeStates  // with jobConfig.allShapes
	syncs   *actors.Probe // SyncDone
	stats   *actors.Probe // UploadStats
	pid     *actor.PID    // the store actor
	// fence, when set, is the store's StoreConfig.Fence, which closes it.
	fence *barrier.StoreFence
	relay *actor.PID // what the test and the coordinator talk to
	// deaf drops the coordinator's notifications to the store (a lost
	// Complete or Aborted).
	deaf atomic.Bool
}

// relay forwards everything to a store, in order, except the notifications
// a deaf store loses.
type relay struct{ tk *task }

func (r *relay) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case *barrier.Complete, *barrier.Aborted:
		if !r.tk.deaf.Load() {
			ctx.Forward(r.tk.pid)
		}
	default:
		ctx.Forward(r.tk.pid)
	}
}

var valueLayout = subtask.Layout{
	Name:  "v",
	Kind:  subtask.KindValue,
	Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
	Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
}

func keyOf(k int64, maxP int) subtask.Key {
	return subtask.Key{Group: int32(keygroup.ForKeyHash(int32(k), maxP)), Cols: subtask.Row{subtask.Int(k)}}
}

// startJob starts a job over blobs (shared across runs of one test) with its
// local state under root.
func startJob(t testing.TB, blobs *memBlobs, fs *faultyFS, root string, cfg jobConfig) *job {
	t.Helper()
	if cfg.maxP == 0 {
		cfg.maxP = 10
	}
	if cfg.parallelism == 0 {
		cfg.parallelism = 1
	}
	if cfg.timeout == 0 {
		cfg.timeout = time.Minute
	}
	if cfg.retry.Backoff == 0 {
		cfg.retry.Backoff = time.Millisecond
	}
	sys := actors.NewSystem(actors.Options{ExecutorLimit: 8})
	var sim *actors.Sim
	if cfg.sim != 0 {
		sim = actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: cfg.sim}})
		sys = sim.System()
	}
	j := &job{t: t, cfg: cfg, sys: sys, sim: sim, blobs: blobs, fs: fs, root: root}
	t.Cleanup(j.stop)
	probe := func(name string) *actors.Probe {
		p, err := actors.NewProbe(sys, name)
		if err != nil {
			t.Fatal(err)
		}
		p.SetWait(probeWait)
		return p
	}
	j.ctl, j.trig, j.notes = probe("ctl"), probe("trig"), probe("notes")
	var err error
	j.uploader, err = sys.Spawn("uploader", barrier.NewUploader(sys, barrier.UploaderConfig{Blobs: blobs, FileIO: fs, Parallelism: 4, Retry: cfg.retry}))
	if err != nil {
		t.Fatal(err)
	}
	j.coord, err = sys.Spawn("coordinator", barrier.NewCoordinator(sys, barrier.CoordinatorConfig{
		JobID: "job", Blobs: blobs, Retain: cfg.retain, Timeout: cfg.timeout, TriggerTarget: j.trig.PID(), RecoveredTo: j.ctl.PID(),
		Operators: []barrier.OperatorSpec{{ID: opID, Parallelism: cfg.parallelism, MaxParallelism: cfg.maxP}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	j.recovered, err = actors.Expect[*barrier.Recovered](j.ctl)
	if err != nil {
		t.Fatal(err)
	}
	if j.recovered.Err != nil {
		t.Fatal(j.recovered.Err)
	}
	from := cfg.restore
	if from == nil && cfg.restoreLatest {
		from = j.recovered.Latest
	}
	var plans []barrier.SubtaskRestore
	if from != nil {
		plans, err = barrier.PlanRestore(from, opID, cfg.parallelism)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range cfg.parallelism {
		tk := &task{idx: i, kg: keygroup.RangeForSubtask(cfg.maxP, cfg.parallelism, i), syncs: probe(fmt.Sprintf("syncs-%d", i)), stats: probe(fmt.Sprintf("stats-%d", i))}
		dir, err := makeRunDir(root, i)
		if err != nil {
			t.Fatal(err)
		}
		tk.workDir = filepath.Join(dir, "work")
		entropy := io.Reader(rand.Reader)
		if sim != nil {
			entropy = mrand.NewChaCha8([32]byte{byte(cfg.sim), byte(i), byte(len(j.blobs.names()))})
		}
		id, err := barrier.NewBackendID(entropy)
		if err != nil {
			t.Fatal(err)
		}
		pebbleOpts := subtask.PebbleOptions{MemTableSize: cfg.memTable, CheckpointDir: barrier.PebbleCheckpointDirs(tk.workDir)}
		var history *barrier.History
		var restored *barrier.RestoredStore
		if from != nil {
			restored, err = barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{
				Metadata: from, Plan: plans[i], Backend: cfg.backend, Blobs: blobs, FileIO: fs,
				Dir: filepath.Join(dir, "state"), Pebble: pebbleOpts, BackendID: id,
			})
			if err != nil {
				t.Fatal(err)
			}
			j.restored = append(j.restored, restored)
			tk.backend, history = restored.Backend, restored.History
		} else {
			history, err = barrier.NewHistory(id)
			if err != nil {
				t.Fatal(err)
			}
			switch cfg.backend {
			case barrier.BackendMemory:
				tk.backend = subtask.NewMemory()
			case barrier.BackendPebble:
				tk.backend, err = subtask.OpenPebble(barrier.PebbleDBDir(filepath.Join(dir, "state")), pebbleOpts)
			case barrier.BackendPaimon:
				tk.backend, err = subtask.OpenPaimon(barrier.PaimonRoot(filepath.Join(dir, "state")), subtask.PaimonOptions{FileIO: fs})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		tk.store = subtask.NewStore(tk.backend)
		if tk.values, err = tk.store.Value(valueLayout); err != nil {
			t.Fatal(err)
		}
		if cfg.allShapes {
			tk.shapes = registerShapes(t, tk)
		}
		if restored != nil {
			if err := restored.Finish(tk.store, fs); err != nil {
				t.Fatal(err)
			}
		}
		tk.pid, err = sys.Spawn(fmt.Sprintf("store-%d", i), barrier.NewStoreActor(sys, barrier.StoreConfig{
			Operator: opID, Subtask: i, KeyGroups: tk.kg, WorkDir: tk.workDir, FileIO: fs,
			Uploader: j.uploader, Coordinator: j.coord, History: history, Stats: tk.stats.PID(),
			Maintenance: compaction.Config{CheckInvariants: true},
		}))
		if err != nil {
			t.Fatal(err)
		}
		tk.relay, err = sys.Spawn(fmt.Sprintf("relay-%d", i), func() actor.Actor { return &relay{tk: tk} })
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(j.coord, &barrier.Subscribe{PID: tk.relay})
		j.tasks = append(j.tasks, tk)
	}
	// The probe hears notifications after every store: a test that reacts
	// to one reaches a store only after it.
	sys.Send(j.coord, &barrier.Subscribe{PID: j.notes.PID()})
	return j
}

// makeRunDir makes a fresh directory for one run of subtask i.
func makeRunDir(root string, i int) (string, error) {
	for n := 0; ; n++ {
		dir := filepath.Join(root, fmt.Sprintf("run-%d-task-%d", n, i))
		if _, err := table.NewLocalFileIO().Stat(filepath.Join(dir, "marker")); err == nil {
			continue
		}
		w, err := table.NewLocalFileIO().Create(filepath.Join(dir, "marker"))
		if err != nil {
			return "", err
		}
		return dir, w.Close()
	}
}

// stop stops every actor of the job, waits until they are gone (so none
// submits executor work while the system closes), closes the system and the
// backends.
func (j *job) stop() {
	if j.sys == nil {
		return
	}
	var pids []*actor.PID
	for _, tk := range j.tasks {
		pids = append(pids, tk.relay, tk.pid)
	}
	pids = append(pids, j.coord, j.uploader)
	w, err := actors.NewProbe(j.sys, "stopper")
	if err != nil {
		j.t.Fatal(err)
	}
	w.SetWait(probeWait)
	for _, pid := range pids {
		w.Watch(pid)
		j.sys.Stop(pid)
	}
	for range pids {
		if _, err := actors.Expect[*actor.Terminated](w); err != nil {
			j.t.Errorf("stopping the job: %v", err)
			break
		}
	}
	j.sys.Close()
	for _, tk := range j.tasks {
		if tk.fence != nil {
			tk.fence.Close(tk.backend.Close)
		} else {
			tk.backend.Close()
		}
	}
	for _, r := range j.restored {
		r.Close()
	}
	j.sys = nil
}

// owner is the task owning key k.
func (j *job) owner(k int64) *task {
	kg := keygroup.ForKeyHash(int32(k), j.cfg.maxP)
	return j.tasks[keygroup.SubtaskForKeyGroup(j.cfg.maxP, j.cfg.parallelism, kg)]
}

// put writes value v for every key.
func (j *job) put(v int64, keys ...int64) {
	for _, k := range keys {
		j.owner(k).values.Put(keyOf(k, j.cfg.maxP), subtask.Row{subtask.Int(v)})
	}
	for _, tk := range j.tasks {
		tk.store.EndBatch()
	}
}

// get reads keys at their owners: value, or -1 when absent.
func (j *job) get(keys ...int64) []int64 {
	j.t.Helper()
	out := make([]int64, len(keys))
	for i, k := range keys {
		tk := j.owner(k)
		rows, err := tk.values.GetBatch([]subtask.Key{keyOf(k, j.cfg.maxP)}, nil)
		if err != nil {
			j.t.Fatal(err)
		}
		out[i] = -1
		if rows[0] != nil {
			out[i] = rows[0][0].Int()
		}
		tk.store.EndBatch()
	}
	return out
}

// scanAll reads every key of every task by probing candidates.
func (j *job) getAt(tk *task, k int64) (int64, bool) {
	j.t.Helper()
	rows, err := tk.values.GetBatch([]subtask.Key{keyOf(k, j.cfg.maxP)}, nil)
	if err != nil {
		j.t.Fatal(err)
	}
	defer tk.store.EndBatch()
	if rows[0] == nil {
		return 0, false
	}
	return rows[0][0].Int(), true
}

// outcome is how one checkpoint ended.
type outcome struct {
	id    barrier.CheckpointID
	syncs []*barrier.SyncDone
	// ups are the tasks' upload statistics of a completed checkpoint.
	ups  []*barrier.UploadStats
	err  error // nil: completed
	blob string
}

// trigger starts a checkpoint and returns its id.
func (j *job) trigger(kind barrier.Kind) barrier.CheckpointID {
	j.t.Helper()
	j.sys.Request(j.coord, &barrier.Trigger{Kind: kind}, j.ctl.PID())
	tr, err := actors.Expect[*barrier.Triggered](j.ctl)
	if err != nil || tr.Err != nil {
		j.t.Fatalf("trigger: %v %v", err, tr)
	}
	tc, err := actors.Expect[*barrier.TriggerCheckpoint](j.trig)
	if err != nil || tc.ID != tr.ID {
		j.t.Fatalf("trigger checkpoint: %v %+v", err, tc)
	}
	return tr.ID
}

// barrier runs the sync phase of id at every task.
func (j *job) barrier(id barrier.CheckpointID, kind barrier.Kind) []*barrier.SyncDone {
	j.t.Helper()
	for _, tk := range j.tasks {
		j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: kind, Store: tk.store, ReplyTo: tk.syncs.PID()})
	}
	out := make([]*barrier.SyncDone, len(j.tasks))
	for i, tk := range j.tasks {
		sd, err := actors.Expect[*barrier.SyncDone](tk.syncs)
		if err != nil {
			j.t.Fatal(err)
		}
		if sd.ID != id {
			j.t.Fatalf("task %d: sync done of %d during %d", i, sd.ID, id)
		}
		out[i] = sd
	}
	return out
}

// await waits for the notification of id.
func (j *job) await(id barrier.CheckpointID) (error, string) {
	j.t.Helper()
	for {
		m, err := j.notes.Next()
		if err != nil {
			j.t.Fatalf("waiting for checkpoint %d: %v", id, err)
		}
		switch n := m.(type) {
		case *barrier.Complete:
			if n.ID == id {
				return nil, n.Metadata
			}
		case *barrier.Aborted:
			if n.ID == id {
				return n.Err, ""
			}
		}
	}
}

// checkpoint takes one checkpoint or savepoint end to end.
func (j *job) checkpoint(kind barrier.Kind) outcome {
	j.t.Helper()
	id := j.trigger(kind)
	syncs := j.barrier(id, kind)
	err, blob := j.await(id)
	o := outcome{id: id, syncs: syncs, err: err, blob: blob}
	if err == nil {
		o.ups = j.uploadStats(id)
	}
	return o
}

// uploadStats takes every task's upload statistics of checkpoint id, which
// completed: each task handed its upload off before it acknowledged.
// Statistics of earlier checkpoints (ones that failed after their hand-off)
// are skipped.
func (j *job) uploadStats(id barrier.CheckpointID) []*barrier.UploadStats {
	j.t.Helper()
	out := make([]*barrier.UploadStats, len(j.tasks))
	for i, tk := range j.tasks {
		for out[i] == nil {
			st, err := actors.Expect[*barrier.UploadStats](tk.stats)
			if err != nil {
				j.t.Fatalf("task %d: upload statistics of checkpoint %d: %v", i, id, err)
			}
			switch {
			case st.ID == id:
				out[i] = st
			case st.ID > id:
				j.t.Fatalf("task %d: upload statistics of checkpoint %d before those of %d", i, st.ID, id)
			}
		}
	}
	return out
}

// mustComplete takes a checkpoint that must complete.
func (j *job) mustComplete(kind barrier.Kind) outcome {
	j.t.Helper()
	o := j.checkpoint(kind)
	if o.err != nil {
		j.t.Fatalf("%s %d: %v", kind, o.id, o.err)
	}
	return o
}

// metadata reads the metadata of a completed checkpoint.
func (j *job) metadata(o outcome) *barrier.Metadata {
	j.t.Helper()
	m, err := barrier.ReadMetadata(context.Background(), j.blobs, o.blob)
	if err != nil {
		j.t.Fatal(err)
	}
	return m
}

// settle waits until no store, the uploader and the coordinator have work
// in flight and returns the coordinator's view.
func (j *job) settle() *barrier.Quiet {
	j.t.Helper()
	for _, tk := range j.tasks {
		j.sys.Request(tk.relay, &barrier.Drain{}, j.ctl.PID())
		if _, err := actors.Expect[*barrier.Drained](j.ctl); err != nil {
			j.t.Fatal(err)
		}
	}
	j.sys.Request(j.uploader, &barrier.Drain{}, j.ctl.PID())
	if _, err := actors.Expect[*barrier.Drained](j.ctl); err != nil {
		j.t.Fatal(err)
	}
	j.sys.Request(j.coord, &barrier.Quiesce{}, j.ctl.PID())
	q, err := actors.Expect[*barrier.Quiet](j.ctl)
	if err != nil {
		j.t.Fatal(err)
	}
	return q
}

// checkNoLeaks asserts that the blob store holds exactly what the
// coordinator references and no task has a chk-* directory left.
func (j *job) checkNoLeaks() {
	j.t.Helper()
	q := j.settle()
	if got := j.blobs.names(); !slices.Equal(got, q.LiveBlobs) {
		j.t.Fatalf("blob store holds\n  %v\nthe coordinator references\n  %v", got, q.LiveBlobs)
	}
	for _, tk := range j.tasks {
		names, err := table.NewLocalFileIO().List(tk.workDir)
		if err != nil {
			j.t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasPrefix(n, "chk-") {
				j.t.Fatalf("task %d left %s", tk.idx, n)
			}
		}
	}
}
