package actors

import "sync"

// JobFence keeps an actor's executor jobs apart from the closing of what
// they use: a job that starts after Close is refused, and the closer runs
// once no job runs any more: at once, or when the last running job ends,
// on that job's goroutine. Close never waits, so an actor may call it from
// Receive while its jobs still run on the executor. The zero value is an
// open fence.
type JobFence struct {
	mu      sync.Mutex
	running int
	closed  bool         // jobs that start from now on are refused
	closer  func() error // deferred to the end of the last running job
	done    chan struct{}
	err     error
}

// Run runs job unless the fence is closed, and reports whether it ran.
func (f *JobFence) Run(job func()) bool {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return false
	}
	f.running++
	f.mu.Unlock()
	defer f.leave()
	job()
	return true
}

// Close refuses every later job and runs closer once no job runs. It
// returns closer's error when closer ran at once (Err tells it later).
// Only the first call counts.
func (f *JobFence) Close(closer func() error) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	if f.running > 0 {
		f.closer = closer
		f.mu.Unlock()
		return nil
	}
	f.mu.Unlock()
	return f.finish(closer)
}

// Done is closed once the closer ran.
func (f *JobFence) Done() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.doneLocked()
}

// Err waits for the closer and returns what it returned.
func (f *JobFence) Err() error {
	<-f.Done()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *JobFence) doneLocked() chan struct{} {
	if f.done == nil {
		f.done = make(chan struct{})
	}
	return f.done
}

func (f *JobFence) leave() {
	f.mu.Lock()
	f.running--
	closer := f.closer
	if f.running > 0 || closer == nil {
		f.mu.Unlock()
		return
	}
	f.closer = nil
	f.mu.Unlock()
	f.finish(closer)
}

func (f *JobFence) finish(closer func() error) error {
	err := closer()
	f.mu.Lock()
	f.err = err
	close(f.doneLocked())
	f.mu.Unlock()
	return err
}
