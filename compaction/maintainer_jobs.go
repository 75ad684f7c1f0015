package compaction

import (
	"errors"
	"sync"

	"github.com/lakestate/lakestate/actors"
)

// errMaintainerStopped: the job's maintainer stopped before the job started.
var errMaintainerStopped = errors.New("compaction: maintainer stopped before the job started")

// Jobs counts the running executor jobs of the maintainers that share it
// (Config.Jobs). A stopped maintainer starts no job and closes its session
// only once its running job ended, so after every maintainer of a table
// has stopped, Wait returning means no maintenance job writes into the
// table's directory or holds its files open any more: whoever removes the
// directory (a restore removing an earlier run's state) waits for it first.
type Jobs struct {
	mu      sync.Mutex
	idle    sync.Cond
	running int
}

// Wait blocks until no job of the maintainers sharing j runs, nor the close
// of a session that waited for one. Call it once those maintainers stopped:
// it does not keep running ones from starting jobs.
func (j *Jobs) Wait() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.running > 0 {
		j.cond().Wait()
	}
}

func (j *Jobs) add(n int) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.running += n
	if j.running == 0 {
		j.cond().Broadcast()
	}
}

// cond is the condition variable of idle; j.mu is held.
func (j *Jobs) cond() *sync.Cond {
	if j.idle.L == nil {
		j.idle.L = &j.mu
	}
	return &j.idle
}

// jobFence keeps a maintainer's executor jobs and its stop apart
// (actors.JobFence: a job that starts after the stop is refused, and the
// stop's closer, the session's Close, which closes the files a running job
// reads, runs once the running job ended), and counts its jobs in the
// Jobs its maintainers share.
type jobFence struct {
	jobs  *Jobs
	fence actors.JobFence
}

// run runs job unless the fence is stopped, and reports whether it ran.
// The count covers the closer a stop left to the job.
func (f *jobFence) run(job func()) bool {
	f.jobs.add(1)
	defer f.jobs.add(-1)
	return f.fence.Run(job)
}

// stop refuses every later job and runs closer: at once when no job runs,
// else when the last running one ends. Only the first stop counts.
func (f *jobFence) stop(closer func()) {
	f.fence.Close(func() error { closer(); return nil })
}
