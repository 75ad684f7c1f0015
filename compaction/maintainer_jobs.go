package compaction

import (
	"errors"
	"sync"
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

// jobFence keeps a maintainer's executor jobs and its stop apart: a job
// that starts after the stop is refused, and the stop's closer (the
// session's Close, which closes the files a running job reads) runs once
// the running job ended, on its goroutine. stop never waits, so the actor
// may call it.
type jobFence struct {
	mu      sync.Mutex
	running int
	stopped bool
	closer  func() // deferred to the end of the running jobs
	jobs    *Jobs
}

// run runs job unless the fence is stopped, and reports whether it ran.
func (f *jobFence) run(job func()) bool {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return false
	}
	f.running++
	f.jobs.add(1)
	f.mu.Unlock()
	defer f.jobs.add(-1)
	job()
	f.mu.Lock()
	f.running--
	var closer func()
	if f.running == 0 {
		closer, f.closer = f.closer, nil
	}
	f.mu.Unlock()
	if closer != nil {
		closer()
	}
	return true
}

// stop refuses every later job and runs closer: at once when no job runs,
// else when the last running one ends. Only the first stop counts.
func (f *jobFence) stop(closer func()) {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return
	}
	f.stopped = true
	if f.running > 0 {
		f.closer = closer
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	closer()
}
