package runtime

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// errRunStopped: the run stopped before its prepare started.
var errRunStopped = errors.New("run stopped before its state was prepared")

// runStores owns the stores of a run from their opening until each is
// closed through its fence. A task closes its store when it stops, but not
// every store reaches a task that stops: a task stopped before it was wired,
// one restarted by its supervisor, a prepare whose result the job no longer
// takes (it failed, or it is gone). The run's stop closes every store that
// is still open, and waits, since the next run's prepare removes the
// directories they live in. The prepare runs inside fence: one that has not
// started when the run stops never does, and a running one's stores close
// once it ended.
type runStores struct {
	fence actors.JobFence
	// starts is what the prepare made, once it ran (none if it failed: it
	// closed what it opened).
	starts []*taskStart
}

// prepare runs p unless the run stopped.
func (s *runStores) prepare(p *runPrep) *prepared {
	var out *prepared
	if !s.fence.Run(func() {
		out = p.prepare()
		s.starts = append(s.starts, out.starts...)
	}) {
		return &prepared{err: errRunStopped}
	}
	return out
}

// close closes every store of the run through its fence, once the prepare
// ended: at once when no Store actor job uses it, else when the last running
// one ends. Call it once the run's actors are gone; only the first call
// counts, and a store its task closed already stays closed.
func (s *runStores) close() {
	s.fence.Close(func() error {
		for _, st := range s.starts {
			st.fence.Close(st.close)
		}
		return nil
	})
}

// wait waits until every store of the run is closed, after close, and
// returns what closing them returned.
func (s *runStores) wait() error {
	<-s.fence.Done()
	var errs []error
	for _, st := range s.starts {
		errs = append(errs, st.fence.Err())
	}
	return errors.Join(errs...)
}

// operatorJobs runs the executor jobs of a run's operators (OperatorContext.
// Submit) inside a fence: a job that has not started when the run stops
// never runs, and the stop waits for the running ones.
type operatorJobs struct {
	sys   *actors.System
	fence actors.JobFence
}

// refusedJob is what a job refused after the run stopped posts to its
// (stopped) task.
type refusedJob struct{}

// submit returns the Submit of the operator of the task at self.
func (o *operatorJobs) submit(self *actor.PID) func(work func() any) {
	return func(work func() any) {
		o.sys.Executor().Submit(self, func() any {
			var out any = &refusedJob{}
			o.fence.Run(func() { out = work() })
			return out
		})
	}
}

// stop refuses every later job; wait waits until no running job is left.
func (o *operatorJobs) stop() { o.fence.Close(func() error { return nil }) }
func (o *operatorJobs) wait() { <-o.fence.Done() }
