package barrier

import (
	"errors"

	"github.com/lakestate/lakestate/actors"
)

// ErrStoreClosed: the store was closed (its job failed over) before an
// executor job of its Store actor could use it.
var ErrStoreClosed = errors.New("store closed")

// StoreFence keeps a subtask's store open while the executor jobs of its
// Store actor use it (a flush, a paimon freeze or commit, a listing of the
// tables' files, links of table files), and closes it once none does: a job
// fails over by closing its stores while the Store actors' jobs may still be
// running on other goroutines. Whoever closes the store (the subtask, when
// it stops) and the Store actor (StoreConfig.Fence) share one fence.
type StoreFence struct {
	jobs actors.JobFence
}

// NewStoreFence returns the fence of one store.
func NewStoreFence() *StoreFence { return &StoreFence{} }

// Close closes the store with closer (its backend's Close) once no job uses
// it: at once when none runs, else when the last running job ends, on that
// job's goroutine. Jobs that start after Close are refused with
// ErrStoreClosed. Close never waits, so an actor may call it; it returns
// closer's error when closer ran at once. Only the first call closes; Done
// tells when the store is closed and Err what closer returned.
func (f *StoreFence) Close(closer func() error) error { return f.jobs.Close(closer) }

// Done is closed once the store is closed.
func (f *StoreFence) Done() <-chan struct{} { return f.jobs.Done() }

// Err is what closing the store returned, once Done is closed.
func (f *StoreFence) Err() error { return f.jobs.Err() }

// use runs job with the store open, or returns ErrStoreClosed without
// running it once the store is closed. A nil fence runs every job: whoever
// closes that store waits for the executor first.
func (f *StoreFence) use(job func() error) error {
	if f == nil {
		return job()
	}
	var err error
	if !f.jobs.Run(func() { err = job() }) {
		return ErrStoreClosed
	}
	return err
}
