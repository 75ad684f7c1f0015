package runtime

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// taskEnv is what every task of a run shares: the system, the plan and the
// run's settings.
type taskEnv struct {
	sys      *actors.System
	plan     *plan
	opts     *Options
	restores []*taskRestore // by global task; nil entries start fresh
	job      *actor.PID
}

// taskCore is what every task does with its PIDs, its outputs and failure.
type taskCore struct {
	env    *taskEnv
	tp     *taskPlan
	pids   []*actor.PID
	self   *actor.PID
	out    *outputs
	ck     Checkpointer
	failed bool
}

func (c *taskCore) send(to *actor.PID, msg any) { c.env.sys.Send(to, msg) }

func (c *taskCore) wire(self *actor.PID, m *wireMsg) {
	c.self, c.pids = self, m.pids
	c.out = newOutputs(c.env.plan, c.tp, m.pids, c.env.opts.Credits, c.send)
	c.ck = &localCheckpointer{sys: c.env.sys, coordinator: c.env.job, backend: c.env.opts.Backend, task: c.tp.global}
}

// fail reports the task's failure to the job and makes the task ignore
// everything from then on.
func (c *taskCore) fail(err error) {
	if c.failed {
		return
	}
	c.failed = true
	c.send(c.env.job, &taskFailed{task: c.tp.global, err: fmt.Errorf("%s: %w", c.tp.id, err)})
}

func (c *taskCore) restore() *taskRestore { return c.env.restores[c.tp.global] }

// restartedTask replaces a task that panicked and was restarted by its
// supervisor: its state is gone, so the run cannot go on.
type restartedTask struct {
	env  *taskEnv
	task int
}

func (r *restartedTask) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		r.env.sys.Send(r.env.job, &taskFailed{task: r.task, err: fmt.Errorf("task %s restarted after a panic", r.env.plan.tasks[r.task].id)})
	}
}
