package runtime

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/table"
)

// taskEnv is what every task of a run shares: the system, the plan and the
// run's settings.
type taskEnv struct {
	sys  *actors.System
	plan *plan
	opts *Options
	fio  table.FileIO
	// local holds the local files of the job's runs, dir this run's.
	local, dir string
	// starts is what each task starts from, by global task; set by the job
	// before it spawns the tasks.
	starts []*taskStart
	job    *actor.PID
	// maint counts the running jobs of the run's table maintainers.
	maint *compaction.Jobs
	// stores closes what the prepare opened when the run stops.
	stores *runStores
	// opJobs runs the operators' executor jobs (a sink's commits).
	opJobs *operatorJobs
	// uploads runs the uploader's puts.
	uploads *actors.JobFence
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
	// syncID is the checkpoint of the latest sync phase, begun at syncAt.
	syncID int64
	syncAt time.Time
}

func (c *taskCore) send(to *actor.PID, msg any) { c.env.sys.Send(to, msg) }

func (c *taskCore) wire(self *actor.PID, m *wireMsg) {
	c.self, c.pids = self, m.pids
	c.out = newOutputs(c.env.plan, c.tp, m.pids, c.env.opts.Credits, c.send)
	c.ck = &storeCheckpointer{sys: c.env.sys, store: m.stores[c.tp.global]}
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

func (c *taskCore) start() *taskStart { return c.env.starts[c.tp.global] }

// syncStarted notes when the task's sync phase of a checkpoint began, on the
// system clock; synced reports its end to the job.
func (c *taskCore) syncStarted(id int64) {
	c.syncID, c.syncAt = id, c.env.sys.Clock().Now()
}

func (c *taskCore) synced(m *barrier.SyncDone) {
	if int64(m.ID) != c.syncID {
		return
	}
	took := c.env.sys.Clock().Now().Sub(c.syncAt)
	c.send(c.env.job, &taskSynced{id: c.syncID, task: c.tp.global, took: took, done: m})
}

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
