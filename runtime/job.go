package runtime

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
)

// jobActor runs one run of a job. It spawns the checkpoint actors (the
// barrier Coordinator, an Uploader), waits for the coordinator's recovery,
// prepares every task's state off the actors (restoring the latest completed
// checkpoint when asked), then spawns a task and a Store actor per subtask
// and wires them. It asks the coordinator for checkpoints (periodically, on
// request, and once at the end) and injects the barriers it is told to at
// the sources. It also notices the end: once every sink's input ended it
// takes a final checkpoint, and the run is finished when every sink has
// committed it.
type jobActor struct {
	env    *taskEnv
	driver *actor.PID
	self   *actor.PID
	coord  *actor.PID
	upload *actor.PID
	trig   triggers
	pids   []*actor.PID
	stores []*actor.PID
	// sources and sinks are global task indexes.
	sources, sinks []int
	idle           map[int]bool
	allIdle        bool
	sinksEnded     int
	// finalWanted: every sink's input ended; final is the checkpoint that
	// captures everything (0 until it starts).
	finalWanted bool
	final       int64
	completed   int64
	committed   map[int]int64
	// failures counts the checkpoints that failed since the last one
	// completed.
	failures int
	// stalled counts the stores whose maintenance is behind (too many
	// sorted runs): while any is, the sources hold.
	stalled int
	// finishing: the final checkpoint is committed and the Store actors
	// are asked to drain (draining: answers to come), so that no removal of
	// theirs outlives the run.
	finishing bool
	draining  int
	done      bool
	stopping  bool
}

func (j *jobActor) Receive(ctx actor.Context) {
	if j.done {
		return
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		j.start(ctx)
	case *actor.Stopping, *actor.Restarting:
		// A restart stops the children too; the restarted job fails the
		// run.
		j.stopping = true
	case *actor.Stopped:
	case *actor.Terminated:
		// A child stops on its own only when it panicked.
		if !j.stopping {
			j.failRun(fmt.Errorf("%s stopped", m.Who.Id))
		}
	case *barrier.Recovered:
		j.recovered(ctx, m)
	case *prepared:
		j.prepared(ctx, m)
	case *triggerRequest:
		if j.trig.request(m.token) {
			j.askCheckpoint(ctx)
		}
	case *abortRetry:
		j.retryAborted(ctx)
	case *checkpointTick:
		if j.trig.request(0) {
			j.askCheckpoint(ctx)
		}
		j.env.sys.Clock().SendAfter(j.env.opts.CheckpointInterval, ctx.Self(), &checkpointTick{})
	case *barrier.Triggered:
		j.triggered(m)
	case *barrier.TriggerCheckpoint:
		j.inject(int64(m.ID))
	case *barrier.Complete:
		if m.Kind == barrier.KindCheckpoint {
			j.complete(ctx, int64(m.ID))
		}
	case *barrier.Aborted:
		j.abort(ctx, int64(m.ID), m.Err)
	case *compaction.BackpressureChanged:
		j.backpressure(ctx, m.Backpressure.Stalled)
	case *barrier.UploadStats:
		j.env.sys.Send(j.driver, &evUploaded{stats: m})
	case *taskSynced:
		keyed := j.env.plan.tasks[m.task].node.keyed()
		j.env.sys.Send(j.driver, &evSynced{id: m.id, task: m.task, keyed: keyed, took: m.took, done: m.done})
		if j.trig.taskSynced(m.id) && j.trig.next() {
			j.askCheckpoint(ctx)
		}
	case *sourceIdle:
		j.idle[m.task] = m.idle
		all := true
		for _, s := range j.sources {
			all = all && j.idle[s]
		}
		if all && !j.allIdle {
			ctx.Send(j.driver, &evSourcesIdle{})
		}
		j.allIdle = all
	case *inputEnded:
		j.sinksEnded++
		if j.sinksEnded == len(j.sinks) {
			j.finalWanted = true
			if j.trig.request(0) {
				j.askCheckpoint(ctx)
			}
		}
	case *sinkCommitted:
		j.committed[m.task] = max(j.committed[m.task], m.id)
		j.checkFinished()
	case *barrier.Drained:
		j.drained()
	case *taskFailed:
		j.failRun(m.err)
	default:
		j.failRun(fmt.Errorf("job: unexpected message %T", m))
	}
}

// start spawns the checkpoint actors; the coordinator answers Recovered
// once it has read what the blob store holds.
func (j *jobActor) start(ctx actor.Context) {
	j.self = ctx.Self()
	j.env.job = ctx.Self()
	sys, opts, p := j.env.sys, j.env.opts, j.env.plan
	var err error
	j.upload, err = sys.SpawnChild(ctx, "uploader", barrier.NewUploader(sys, barrier.UploaderConfig{Blobs: opts.Blobs, FileIO: j.env.fio, Jobs: j.env.uploads}))
	if err != nil {
		j.failRun(fmt.Errorf("spawn uploader: %w", err))
		return
	}
	var ops []barrier.OperatorSpec
	for _, n := range p.nodes {
		ops = append(ops, barrier.OperatorSpec{ID: n.name, Name: n.name, Parallelism: p.parallelism, MaxParallelism: p.maxParallelism})
	}
	j.coord, err = sys.SpawnChild(ctx, "coordinator", barrier.NewCoordinator(sys, barrier.CoordinatorConfig{
		JobID: opts.Name, Blobs: opts.Blobs, Operators: ops, Retain: opts.Retain, Timeout: opts.CheckpointTimeout,
		MaxConcurrent: maxConcurrent(opts.OverlapCheckpoints),
		TriggerTarget: ctx.Self(), Subscribers: []*actor.PID{ctx.Self()}, RecoveredTo: ctx.Self(),
	}))
	if err != nil {
		j.failRun(fmt.Errorf("spawn coordinator: %w", err))
	}
}

// recovered prepares the tasks' state on the executor, from the latest
// completed checkpoint when the run restores.
func (j *jobActor) recovered(ctx actor.Context, m *barrier.Recovered) {
	if m.Err != nil {
		j.failRun(fmt.Errorf("checkpoint storage: %w", m.Err))
		return
	}
	opts := j.env.opts
	prep := &runPrep{plan: j.env.plan, backend: opts.Backend, blobs: opts.Blobs, fio: j.env.fio,
		local: j.env.local, dir: j.env.dir, entropy: j.entropy(ctx)}
	if opts.RestoreLatest {
		if m.Latest == nil {
			j.failRun(errNoCheckpoint)
			return
		}
		prep.from = m.Latest
	}
	stores := j.env.stores
	j.env.sys.Executor().Submit(ctx.Self(), func() any { return stores.prepare(prep) })
}

// entropy is where the store runs' backend ids come from: a seeded stream in
// a simulation (a seed determines the run), the system's randomness
// otherwise (ids must differ across processes too).
func (j *jobActor) entropy(ctx actor.Context) io.Reader {
	if _, ok := j.env.sys.Simulated(); !ok {
		return rand.Reader
	}
	r := j.env.sys.Rand(ctx.Self().Id)
	var seed [32]byte
	for i := range 4 {
		v := r.Uint64()
		for k := range 8 {
			seed[i*8+k] = byte(v >> (8 * k))
		}
	}
	return mrand.NewChaCha8(seed)
}

// prepared spawns a task and a Store actor per subtask, wires them and lets
// the sources read.
func (j *jobActor) prepared(ctx actor.Context, m *prepared) {
	if m.err != nil {
		j.failRun(m.err)
		return
	}
	sys, p := j.env.sys, j.env.plan
	j.env.starts = m.starts
	maint := j.env.opts.Backend.maintenance()
	maint.Jobs = j.env.maint
	for _, t := range p.tasks {
		st := m.starts[t.global]
		pid, err := sys.SpawnChild(ctx, t.id.String(), j.producer(t))
		if err != nil {
			j.failRun(fmt.Errorf("spawn %s: %w", t.id, err))
			return
		}
		store, err := sys.SpawnChild(ctx, "store-"+t.id.String(), barrier.NewStoreActor(sys, barrier.StoreConfig{
			Operator: t.node.name, Subtask: t.id.Subtask, KeyGroups: t.keyGroups, WorkDir: st.dirs.work, FileIO: j.env.fio,
			Uploader: j.upload, Coordinator: j.coord, History: st.history,
			Maintenance: maint, Backpressure: ctx.Self(), Stats: ctx.Self(), Fence: st.fence,
		}))
		if err != nil {
			j.failRun(fmt.Errorf("spawn store actor of %s: %w", t.id, err))
			return
		}
		j.pids = append(j.pids, pid)
		j.stores = append(j.stores, store)
		ctx.Send(j.coord, &barrier.Subscribe{PID: pid})
		ctx.Send(j.coord, &barrier.Subscribe{PID: store})
		switch t.node.kind {
		case kindSource:
			j.sources = append(j.sources, t.global)
		case kindSink:
			j.sinks = append(j.sinks, t.global)
		}
	}
	for _, pid := range j.pids {
		ctx.Send(pid, &wireMsg{pids: j.pids, stores: j.stores})
	}
	for _, s := range j.sources {
		ctx.Send(j.pids[s], &startMsg{})
	}
	if d := j.env.opts.CheckpointInterval; d > 0 {
		j.env.sys.Clock().SendAfter(d, ctx.Self(), &checkpointTick{})
	}
	var from int64
	if r := m.starts[0].restore; r != nil {
		from = r.id
	}
	ctx.Send(j.driver, &evStarted{restored: from})
	j.trig.overlap, j.trig.tasks = j.env.opts.OverlapCheckpoints, len(p.tasks)
	j.trig.ready = true
	if j.trig.next() {
		j.askCheckpoint(ctx)
	}
}

// jobProducer makes the job actor of a run; a second call means the
// supervisor restarted it after a panic, which the run does not survive: a
// job actor started again would prepare the run's state a second time,
// removing the directories of the stores the first prepare opened.
func jobProducer(job *jobActor) actor.Producer {
	var made atomic.Int32
	return func() actor.Actor {
		if made.Add(1) > 1 {
			return &restartedJob{env: job.env, driver: job.driver}
		}
		return job
	}
}

// restartedJob replaces a job actor that panicked and was restarted by its
// supervisor: it fails the run. Its children stopped with the restart; the
// run's stop closes the stores.
type restartedJob struct {
	env    *taskEnv
	driver *actor.PID
}

func (r *restartedJob) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		r.env.sys.Send(r.driver, &evFailed{err: fmt.Errorf("run %s: job actor restarted after a panic", r.env.opts.Name)})
	}
}

// producer makes a task's actor; a second call means the supervisor
// restarted the task after a panic, which the run does not survive.
func (j *jobActor) producer(t *taskPlan) actor.Producer {
	var made atomic.Int32
	env := j.env
	return func() actor.Actor {
		if made.Add(1) > 1 {
			return &restartedTask{env: env, task: t.global}
		}
		core := taskCore{env: env, tp: t}
		if t.node.kind == kindSource {
			return &sourceTask{taskCore: core}
		}
		return &operatorTask{taskCore: core}
	}
}

// maxConcurrent is the coordinator's bound of checkpoints in flight.
func maxConcurrent(overlap bool) int {
	if overlap {
		return 2
	}
	return 1
}

func (j *jobActor) askCheckpoint(ctx actor.Context) {
	// After the final checkpoint completed the run only waits for its sinks
	// to commit (their Complete may arrive after the job's). A checkpoint
	// started then would still be in its sync phase when the run stops,
	// leaving stores lent to it open.
	if j.final != 0 && j.completed >= j.final {
		j.trig.withdraw()
		return
	}
	ctx.Request(j.coord, &barrier.Trigger{Kind: barrier.KindCheckpoint})
}

func (j *jobActor) triggered(m *barrier.Triggered) {
	busy := errors.Is(m.Err, barrier.ErrTooManyPending)
	tokens := j.trig.triggered(int64(m.ID), m.Err != nil)
	if m.Err != nil && !busy {
		j.failRun(fmt.Errorf("trigger checkpoint: %w", m.Err))
		return
	}
	for _, tok := range tokens {
		j.env.sys.Send(j.driver, &evTriggered{token: tok, id: int64(m.ID)})
	}
}

// inject starts checkpoint id at the sources. A checkpoint injected after
// every sink's input ended captures all output: it is the final one.
func (j *jobActor) inject(id int64) {
	if j.finalWanted && j.final == 0 {
		j.final = id
	}
	for _, s := range j.sources {
		j.env.sys.Send(j.pids[s], &injectBarrier{id: id})
	}
}

func (j *jobActor) complete(ctx actor.Context, id int64) {
	j.trig.ended(id)
	j.completed = max(j.completed, id)
	j.failures = 0
	j.env.sys.Send(j.driver, &evCompleted{id: id})
	j.checkFinished()
	// While a store is stalled, checkpoints follow each other: each one's
	// barrier gives maintenance a round to catch up, and the sources read
	// nothing meanwhile, so no trigger would come from the input.
	if j.stalled > 0 && j.trig.request(0) || j.trig.next() {
		j.askCheckpoint(ctx)
	}
}

func (j *jobActor) abort(ctx actor.Context, id int64, err error) {
	j.trig.ended(id)
	j.env.sys.Send(j.driver, &evAborted{id: id, err: err})
	// A checkpoint older than a completed one was subsumed by it, not
	// failed. The others fail the run once too many fail in a row: a
	// cause that lasts would have every retry fail, the run never ending.
	if id > j.completed {
		j.failures++
		if n := j.env.opts.CheckpointFailures; n >= 0 && j.failures > n {
			j.failRun(fmt.Errorf("run %s: %d checkpoints failed in a row, the last (%d): %w", j.env.opts.Name, j.failures, id, err))
			return
		}
	}
	// A final checkpoint aborted because a later one completed (checkpoints
	// overlap) is not needed again: the later one captured all output too.
	// Otherwise another is asked for after a pause, not at once: one that
	// fails on every try (a store declining it, storage down) would be
	// retried in a loop that keeps the system busy and, in a simulation,
	// its clock from moving. So is one while a store is stalled: the
	// sources hold, and only checkpoints let maintenance catch up (or,
	// failing, end the run); without a periodic trigger none would come.
	switch {
	case j.final == id && j.completed < id:
		j.final = 0
		j.env.sys.Clock().SendAfter(j.env.opts.IdlePoll, ctx.Self(), &abortRetry{})
	case j.stalled > 0:
		j.env.sys.Clock().SendAfter(j.env.opts.IdlePoll, ctx.Self(), &abortRetry{})
	}
	if j.trig.next() {
		j.askCheckpoint(ctx)
	}
}

// abortRetry asks again for a checkpoint after the final one, or one while
// a store was stalled, was aborted, unless the final one has been injected
// since.
type abortRetry struct{}

func (j *jobActor) retryAborted(ctx actor.Context) {
	if j.final == 0 && j.trig.request(0) {
		j.askCheckpoint(ctx)
	}
}

// backpressure holds the sources while some store's maintenance is behind
// and lets them go once none is. Held sources read nothing, so the records
// in flight drain, the barriers get through, and each barrier's maintenance
// round (and the shaping after it) reduces the sorted runs.
func (j *jobActor) backpressure(ctx actor.Context, stalled bool) {
	was := j.stalled > 0
	if stalled {
		j.stalled++
	} else {
		j.stalled--
	}
	now := j.stalled > 0
	if now == was {
		return
	}
	for _, s := range j.sources {
		ctx.Send(j.pids[s], &holdSources{hold: now})
	}
	j.env.sys.Send(j.driver, &evBackpressure{stalled: now})
	if now && j.trig.request(0) {
		j.askCheckpoint(ctx)
	}
}

func (j *jobActor) checkFinished() {
	if j.finishing || j.final == 0 || j.completed < j.final {
		return
	}
	for _, s := range j.sinks {
		if j.committed[s] < j.final {
			return
		}
	}
	j.finishing = true
	j.draining = len(j.stores)
	for _, s := range j.stores {
		j.env.sys.Request(s, &barrier.Drain{}, j.self)
	}
	j.finishIfDrained()
}

// drained counts a Store actor's Drained.
func (j *jobActor) drained() {
	if j.finishing && j.draining > 0 {
		j.draining--
		j.finishIfDrained()
	}
}

// finishIfDrained finishes the run once every Store actor drained.
func (j *jobActor) finishIfDrained() {
	if j.draining == 0 {
		j.done = true
		j.env.sys.Send(j.driver, &evFinished{id: j.final})
	}
}

func (j *jobActor) failRun(err error) {
	j.done = true
	j.env.sys.Send(j.driver, &evFailed{err: err})
}

// taskSynced: a task's sync phase of checkpoint id ended after took.
type taskSynced struct {
	id   int64
	task int
	took time.Duration
	done *barrier.SyncDone
}
