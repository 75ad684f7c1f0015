package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
)

// job is one run of the workload's job: a coordinator and uploader, one
// source, p keyed subtasks and p sink subtasks, each with its Store actor,
// tap and notification relay.
type job struct {
	run      int
	p        int
	probe    *actors.Probe
	coord    *actor.PID
	uploader *actor.PID
	jobAc    *actor.PID
	source   *actor.PID
	pids     []*actor.PID // every actor of the run
	keyed    []*keyedTask
	stores   []*actor.PID // Store actors
	taps     []*actor.PID
	workDirs []string
	from     *barrier.Metadata // the checkpoint the run restored
	restored []*barrier.RestoredStore
	lastID   barrier.CheckpointID
	// maint counts the running jobs of the run's table maintainers.
	maint *compaction.Jobs
	// released: every keyed store is closed and no maintainer job runs
	// (awaitReleased returned).
	released bool
	// uploads runs the uploader's puts; a stopped run's may not land after
	// the next coordinator's orphan sweep.
	uploads *actors.JobFence
}

// keyedTask is a keyed subtask's pieces, for crashes and the final check.
type keyedTask struct {
	pids    []*actor.PID // keyed actor, Store actor, tap, relay
	backend subtask.Backend
	// fence closes backend once no executor job of the Store actor uses it
	// (nil until the Store actor is spawned).
	fence *barrier.StoreFence
	op    *operator
}

func (e *env) name(j *job, s string, i int) string {
	if i < 0 {
		return fmt.Sprintf("%s#%d", s, j.run)
	}
	return fmt.Sprintf("%s-%d#%d", s, i, j.run)
}

func (e *env) spawn(j *job, name string, p actor.Producer) (*actor.PID, error) {
	pid, err := e.sys.Spawn(name, p)
	if err != nil {
		return nil, err
	}
	j.pids = append(j.pids, pid)
	return pid, nil
}

// startCoordinator starts a run's uploader, job actor and coordinator and
// waits for the coordinator's recovery.
func (e *env) startCoordinator(p int) (*job, error) {
	e.runs++
	j := &job{run: e.runs, p: p, maint: &compaction.Jobs{}, uploads: &actors.JobFence{}}
	var err error
	if j.probe, err = actors.NewProbe(e.sys, e.name(j, "driver", -1)); err != nil {
		return nil, err
	}
	if e.sim == nil {
		j.probe.SetWait(realWait)
	}
	j.pids = append(j.pids, j.probe.PID())
	if j.uploader, err = e.spawn(j, e.name(j, "uploader", -1), barrier.NewUploader(e.sys, barrier.UploaderConfig{
		Blobs: e.blobs, FileIO: e.fio, Parallelism: 1 + e.rng.IntN(4), Jobs: j.uploads,
		Retry: barrier.RetryPolicy{MaxAttempts: e.minAttempts + e.rng.IntN(3), Backoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond},
	})); err != nil {
		return nil, err
	}
	jobAc := &jobActor{sys: e.sys, every: e.triggerEvery, lastID: &j.lastID}
	if j.jobAc, err = e.spawn(j, e.name(j, "job", -1), func() actor.Actor { return jobAc }); err != nil {
		return nil, err
	}
	maxP := e.maxP
	if j.coord, err = e.spawn(j, e.name(j, "coordinator", -1), barrier.NewCoordinator(e.sys, barrier.CoordinatorConfig{
		JobID: "sim", Blobs: e.blobs, Retain: e.retain, Timeout: e.timeout, MaxConcurrent: e.maxConcurrent,
		TriggerTarget: j.jobAc, RecoveredTo: j.probe.PID(), Subscribers: []*actor.PID{j.jobAc},
		Operators: []barrier.OperatorSpec{
			{ID: opSource, Parallelism: 1, MaxParallelism: maxP},
			{ID: opKeyed, Parallelism: p, MaxParallelism: maxP},
			{ID: opSink, Parallelism: p, MaxParallelism: maxP},
		},
	})); err != nil {
		return nil, err
	}
	jobAc.coord = j.coord
	rec, err := actors.Expect[*barrier.Recovered](j.probe)
	if err != nil {
		return j, err
	}
	if rec.Err != nil {
		return j, fmt.Errorf("coordinator recovery: %w", rec.Err)
	}
	e.check.recovered(rec.Latest)
	j.from = rec.Latest
	return j, nil
}

// startJob starts a run at parallelism p from the newest completed
// checkpoint, or fresh.
func (e *env) startJob(p int) (*job, error) {
	j, err := e.startCoordinator(p)
	if err != nil {
		return j, err
	}
	from := j.from
	offset := int64(0)
	var sinkTxns [][]txn // per new sink subtask
	sinkTxns = make([][]txn, p)
	var plans []barrier.SubtaskRestore
	adopted := map[int]barrier.CheckpointID{}
	if from != nil {
		src, ok := from.Operator(opSource)
		if !ok || len(src.Subtasks) != 1 {
			return j, fmt.Errorf("checkpoint %d has no source state", from.ID)
		}
		if offset, err = decodeOffset(src.Subtasks[0].Extras[extraSource].Bytes()); err != nil {
			return j, fmt.Errorf("checkpoint %d: %w", from.ID, err)
		}
		sk, ok := from.Operator(opSink)
		if !ok {
			return j, fmt.Errorf("checkpoint %d has no sink state", from.ID)
		}
		for old, st := range sk.Subtasks {
			ts, err := decodeTxns(st.Extras[extraSink].Bytes())
			if err != nil {
				return j, fmt.Errorf("checkpoint %d, sink %d: %w", from.ID, old, err)
			}
			sinkTxns[old%p] = append(sinkTxns[old%p], ts...)
		}
		if plans, err = barrier.PlanRestore(from, opKeyed, p); err != nil {
			return j, err
		}
		for i, pl := range plans {
			if pl.Aligned {
				adopted[i] = from.ID
			}
		}
		e.restores++
		e.logf("restore p=%d from checkpoint %d (offset %d)", p, from.ID, offset)
	} else {
		e.logf("start p=%d fresh", p)
	}
	e.check.startRun(j.run, p, adopted)

	// Sinks first: keyed subtasks send to them.
	sinks := make([]*actor.PID, p)
	for i := range p {
		sk := &sinkActor{env: e, run: j.run, idx: i, restored: sinkTxns[i], progress: e.progressTo}
		storeAc, _, err := e.spawnStore(j, opSink, i, nil, "", nil)
		if err != nil {
			return j, err
		}
		sk.storeAc = storeAc
		if sinks[i], err = e.spawn(j, e.name(j, "sink", i), func() actor.Actor { return sk }); err != nil {
			return j, err
		}
		if err := e.subscribe(j, opSink, i, sinks[i]); err != nil {
			return j, err
		}
	}
	tasks, histories, err := e.openKeyed(j, from, plans, p)
	if err != nil {
		return j, err
	}
	if from != nil {
		if err := e.compareRestored(from, tasks, plans, int(offset)); err != nil {
			e.check.fail(err)
			return j, err
		}
	}
	keyed := make([]*actor.PID, p)
	for i, kt := range tasks {
		kt.fence = barrier.NewStoreFence()
		storeAc, pids, err := e.spawnStore(j, opKeyed, i, histories[i], e.workDir(i), kt.fence)
		if err != nil {
			return j, err
		}
		ka := &keyedActor{env: e, run: j.run, idx: i, op: kt.op, storeAc: storeAc, sink: sinks[i]}
		if keyed[i], err = e.spawn(j, e.name(j, "keyed", i), func() actor.Actor { return ka }); err != nil {
			return j, err
		}
		kt.pids = append(pids, keyed[i])
	}
	storeAc, _, err := e.spawnStore(j, opSource, 0, nil, "", nil)
	if err != nil {
		return j, err
	}
	src := &sourceActor{env: e, run: j.run, sys: e.sys, s: e.stream, off: offset, keyed: keyed, maxP: e.maxP, storeAc: storeAc, pace: e.pace}
	if j.source, err = e.spawn(j, e.name(j, "source", -1), func() actor.Actor { return src }); err != nil {
		return j, err
	}
	e.sys.Send(j.jobAc, &startTriggers{source: j.source})
	return j, nil
}

// openKeyed opens the keyed subtasks' stores of run j: restored from
// checkpoint from along plans, or empty.
func (e *env) openKeyed(j *job, from *barrier.Metadata, plans []barrier.SubtaskRestore, p int) ([]*keyedTask, []*barrier.History, error) {
	var tasks []*keyedTask
	var histories []*barrier.History
	for i := range p {
		kt := &keyedTask{}
		tasks = append(tasks, kt)
		j.keyed = append(j.keyed, kt)
		dir := path.Join(e.root, fmt.Sprintf("run-%d", j.run), fmt.Sprintf("keyed-%d", i))
		backendID, err := barrier.NewBackendID(rand.NewChaCha8(e.entropy(j.run, i)))
		if err != nil {
			return nil, nil, err
		}
		var history *barrier.History
		var restored *barrier.RestoredStore
		if from != nil {
			restored, err = barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{
				Metadata: from, Plan: plans[i], Backend: e.backend, Blobs: e.blobs, FileIO: e.fio,
				Dir: path.Join(dir, "state"), BackendID: backendID, Paimon: e.paimonOptions(),
			})
			if err != nil {
				return nil, nil, fmt.Errorf("restore keyed %d: %w", i, err)
			}
			j.restored = append(j.restored, restored)
			kt.backend, history = restored.Backend, restored.History
		} else {
			if history, err = barrier.NewHistory(backendID); err != nil {
				return nil, nil, err
			}
			if kt.backend, err = e.newBackend(path.Join(dir, "state")); err != nil {
				return nil, nil, err
			}
		}
		store := subtask.NewStore(kt.backend)
		if kt.op, err = registerStates(store, e.maxP); err != nil {
			return nil, nil, err
		}
		if restored != nil {
			if err := restored.Finish(store, e.fio); err != nil {
				return nil, nil, fmt.Errorf("restore keyed %d: %w", i, err)
			}
		}
		histories = append(histories, history)
	}
	return tasks, histories, nil
}

// spawnStore spawns a subtask's Store actor behind a tap, with a relay that
// subscribes it to the coordinator. A subtask without keyed state gets a
// fresh history and no work directory of its own; only a subtask with keyed
// state has a fence, shared with whoever closes its store.
func (e *env) spawnStore(j *job, op string, i int, h *barrier.History, workDir string, fence *barrier.StoreFence) (*actor.PID, []*actor.PID, error) {
	if h == nil {
		id, err := barrier.NewBackendID(rand.NewChaCha8(e.entropy(j.run, 1000+i+len(op))))
		if err != nil {
			return nil, nil, err
		}
		if h, err = barrier.NewHistory(id); err != nil {
			return nil, nil, err
		}
	}
	if workDir == "" {
		workDir = path.Join(e.root, "work", op, fmt.Sprint(i))
	}
	j.workDirs = append(j.workDirs, workDir)
	tap := &storeTap{env: e, run: j.run, op: op, idx: i, coord: j.coord, uploader: j.uploader}
	tapPID, err := e.spawn(j, e.name(j, op+"-tap", i), func() actor.Actor { return tap })
	if err != nil {
		return nil, nil, err
	}
	j.taps = append(j.taps, tapPID)
	kg := keygroup.RangeForSubtask(e.maxP, j.parallelism(op), i)
	storeAc, err := e.spawn(j, e.name(j, op+"-store", i), barrier.NewStoreActor(e.sys, barrier.StoreConfig{
		Operator: op, Subtask: i, KeyGroups: kg, WorkDir: workDir, FileIO: e.fio,
		Uploader: tapPID, Coordinator: tapPID, History: h, Fence: fence,
		Maintenance: compaction.Config{CheckInvariants: true, RetainSnapshots: e.retainSnapshots, ShapingBudget: e.shapingBudget, StepBytes: e.stepBytes, Jobs: j.maint},
	}))
	if err != nil {
		return nil, nil, err
	}
	j.stores = append(j.stores, storeAc)
	if err := e.subscribe(j, op, i, storeAc); err != nil {
		return nil, nil, err
	}
	return storeAc, []*actor.PID{storeAc, tapPID, j.pids[len(j.pids)-1]}, nil
}

func (j *job) parallelism(op string) int {
	if op == opSource {
		return 1
	}
	return j.p
}

// subscribe puts a notification relay in front of target.
func (e *env) subscribe(j *job, op string, i int, target *actor.PID) error {
	r := &notifyRelay{env: e, run: j.run, op: op, idx: i, target: target}
	pid, err := e.spawn(j, e.name(j, op+"-relay-"+target.Id, i), func() actor.Actor { return r })
	if err != nil {
		return err
	}
	e.sys.Send(j.coord, &barrier.Subscribe{PID: pid})
	return nil
}

func (e *env) paimonOptions() subtask.PaimonOptions {
	return subtask.PaimonOptions{TableOptions: e.tableOptions}
}

func (e *env) workDir(i int) string { return path.Join(e.root, "work", opKeyed, fmt.Sprint(i)) }

func (e *env) newBackend(dir string) (subtask.Backend, error) {
	switch e.backend {
	case barrier.BackendMemory:
		return subtask.NewMemory(), nil
	case barrier.BackendPaimon:
		o := e.paimonOptions()
		o.FileIO = e.fio
		return subtask.OpenPaimon(barrier.PaimonRoot(dir), o)
	}
	return nil, fmt.Errorf("backend %q is not supported by the simulation", e.backend)
}

// entropy seeds the backend id of one store run: distinct per seed, run and
// subtask.
func (e *env) entropy(run, i int) [32]byte {
	var b [32]byte
	for k, v := range []uint64{e.cfg.Seed, uint64(run), uint64(i)} {
		for n := range 8 {
			b[k*8+n] = byte(v >> (8 * n))
		}
	}
	return b
}

// release closes what a run opened outside its actors, once its actors are
// stopped or crashed. A keyed store closes through its fence: on the real
// system its Store actor's executor jobs (a flush, a paimon commit) may still
// be running, and the store closes when the last one ends; awaitReleased
// waits for that. In a simulation no job runs between steps, so every store
// closes at once.
func (j *job) release() {
	for _, kt := range j.keyed {
		switch {
		case kt.backend == nil:
		case kt.fence != nil:
			kt.fence.Close(kt.backend.Close)
		default:
			kt.backend.Close()
		}
	}
	for _, r := range j.restored {
		r.Close()
	}
	j.uploads.Close(func() error { return nil })
}

// awaitReleased waits until every keyed store of the run is closed and no
// job of its table maintainers or uploader runs, so that nothing of the run
// writes into its directories or the blob store any more.
func (j *job) awaitReleased() {
	for _, kt := range j.keyed {
		if kt.backend != nil && kt.fence != nil {
			<-kt.fence.Done()
		}
	}
	j.maint.Wait()
	<-j.uploads.Done()
	j.released = true
}
