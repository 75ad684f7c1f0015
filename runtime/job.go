package runtime

import (
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// jobActor runs one run of a job: it spawns a task per subtask, wires them,
// and is the checkpoint coordinator: it triggers checkpoints at the sources,
// collects the tasks' acknowledgements, stores the snapshot and tells every
// task the outcome. It also notices the end: once every sink's input ended
// it takes a final checkpoint, and the run is finished when every sink has
// committed it.
type jobActor struct {
	env    *taskEnv
	driver *actor.PID
	coord  *coordinator
	pids   []*actor.PID
	// sources and sinks are global task indexes.
	sources, sinks []int
	idle           map[int]bool
	allIdle        bool
	sinksEnded     int
	// finalWanted: every sink's input ended; final is the checkpoint that
	// captures everything (0 until it starts).
	finalWanted bool
	final       int64
	committed   map[int]int64
	done        bool
	stopping    bool
}

func (j *jobActor) Receive(ctx actor.Context) {
	if j.done {
		return
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		j.start(ctx)
	case *actor.Stopping:
		j.stopping = true
	case *actor.Stopped, *actor.Restarting:
	case *actor.Terminated:
		// A task stops on its own only when it panicked.
		if !j.stopping {
			j.failRun(fmt.Errorf("task %s stopped", m.Who.Id))
		}
	case *triggerRequest:
		j.startCheckpoint(j.coord.request(m.token))
	case *checkpointTick:
		j.startCheckpoint(j.coord.request(0))
		j.env.sys.Clock().SendAfter(j.env.opts.CheckpointInterval, ctx.Self(), &checkpointTick{})
	case *taskAck:
		last, err := j.coord.ack(m.id, m.task, m.snap)
		if err != nil {
			j.failRun(err)
			return
		}
		if last {
			j.store(ctx, m.id)
		}
	case *taskDecline:
		j.abort(m.id, m.err)
	case *snapshotStored:
		if m.err != nil {
			j.abort(m.id, fmt.Errorf("store of checkpoint %d: %w", m.id, m.err))
			return
		}
		j.complete(m.id)
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
			j.startCheckpoint(j.coord.request(0))
		}
	case *sinkCommitted:
		j.committed[m.task] = max(j.committed[m.task], m.id)
		j.checkFinished()
	case *taskFailed:
		j.failRun(m.err)
	default:
		j.failRun(fmt.Errorf("job: unexpected message %T", m))
	}
}

func (j *jobActor) start(ctx actor.Context) {
	j.env.job = ctx.Self()
	p := j.env.plan
	for _, t := range p.tasks {
		pid, err := j.env.sys.SpawnChild(ctx, t.id.String(), j.producer(t))
		if err != nil {
			j.failRun(fmt.Errorf("spawn %s: %w", t.id, err))
			return
		}
		j.pids = append(j.pids, pid)
		switch t.node.kind {
		case kindSource:
			j.sources = append(j.sources, t.global)
		case kindSink:
			j.sinks = append(j.sinks, t.global)
		}
	}
	for _, pid := range j.pids {
		ctx.Send(pid, &wireMsg{pids: j.pids})
	}
	for _, s := range j.sources {
		ctx.Send(j.pids[s], &startMsg{})
	}
	if d := j.env.opts.CheckpointInterval; d > 0 {
		j.env.sys.Clock().SendAfter(d, ctx.Self(), &checkpointTick{})
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

// startCheckpoint injects a checkpoint the coordinator started, if it did.
func (j *jobActor) startCheckpoint(id int64, tokens []uint64, started bool) {
	if !started {
		return
	}
	if j.finalWanted && j.final == 0 {
		j.final = id
	}
	for _, s := range j.sources {
		j.env.sys.Send(j.pids[s], &TriggerCheckpoint{ID: id})
	}
	for _, tok := range tokens {
		j.env.sys.Send(j.driver, &evTriggered{token: tok, id: id})
	}
}

// store writes the snapshot of checkpoint id, every task having
// acknowledged it, off the actor.
func (j *jobActor) store(ctx actor.Context, id int64) {
	p := j.env.plan
	snap := &Snapshot{ID: id, Job: ctx.Self().Id, MaxParallelism: p.maxParallelism, Backend: j.env.opts.Backend.Name()}
	for _, n := range p.nodes {
		op := OperatorSnapshot{Name: n.name}
		for _, t := range p.nodeTasks(n) {
			op.Subtasks = append(op.Subtasks, j.coord.pending.snaps[t.global])
		}
		snap.Operators = append(snap.Operators, op)
	}
	store := j.env.opts.Checkpoints
	j.env.sys.Executor().Submit(ctx.Self(), func() any {
		return &snapshotStored{id: id, err: store.Put(snap)}
	})
}

func (j *jobActor) complete(id int64) {
	j.coord.stored(id)
	for _, pid := range j.pids {
		j.env.sys.Send(pid, &CheckpointComplete{ID: id})
	}
	j.env.sys.Send(j.driver, &evCompleted{id: id})
	j.startCheckpoint(j.coord.startQueued())
}

func (j *jobActor) abort(id int64, err error) {
	if !j.coord.abort(id) {
		return
	}
	for _, pid := range j.pids {
		j.env.sys.Send(pid, &CheckpointAborted{ID: id, Err: err})
	}
	j.env.sys.Send(j.driver, &evAborted{id: id, err: err})
	if j.final == id {
		j.final = 0
		j.startCheckpoint(j.coord.request(0))
		return
	}
	j.startCheckpoint(j.coord.startQueued())
}

func (j *jobActor) checkFinished() {
	if j.final == 0 || j.coord.completed < j.final {
		return
	}
	for _, s := range j.sinks {
		if j.committed[s] < j.final {
			return
		}
	}
	j.done = true
	j.env.sys.Send(j.driver, &evFinished{id: j.final})
}

func (j *jobActor) failRun(err error) {
	j.done = true
	j.env.sys.Send(j.driver, &evFailed{err: err})
}
