package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"golang.org/x/sync/errgroup"
)

// Executor runs blocking work (uploads, large reads, fsync) off the actor that needs it, so the
// actor keeps handling messages, and posts the work's result back as a message.
type Executor interface {
	// Submit runs work later and sends its return value to replyTo, with no sender. Submit does
	// not wait for the work. The work must not touch actor state: it gets what it needs from
	// the closure and returns a message (typically a struct carrying a result and an error).
	// A panic in work is a bug and is not recovered, in the real system as in a simulation.
	Submit(replyTo *actor.PID, work func() any)
}

const defaultExecutorLimit = 8

// goroutineExecutor runs jobs on goroutines bounded by an errgroup limit. Submit never blocks an
// actor for a free slot: jobs wait in a FIFO queue, and each worker drains it before exiting.
type goroutineExecutor struct {
	root  *actor.RootContext
	limit int
	group errgroup.Group

	mu      sync.Mutex
	idle    sync.Cond // signalled when workers drops to zero
	queue   []executorJob
	workers int // workers started and not yet past their final queue check
}

type executorJob struct {
	replyTo *actor.PID
	work    func() any
}

func newGoroutineExecutor(root *actor.RootContext, limit int) *goroutineExecutor {
	if limit <= 0 {
		limit = defaultExecutorLimit
	}
	e := &goroutineExecutor{root: root, limit: limit}
	e.idle.L = &e.mu
	e.group.SetLimit(limit)
	return e
}

func (e *goroutineExecutor) Submit(replyTo *actor.PID, work func() any) {
	e.mu.Lock()
	e.queue = append(e.queue, executorJob{replyTo: replyTo, work: work})
	start := e.workers < e.limit
	if start {
		e.workers++
	}
	e.mu.Unlock()
	if start {
		// workers < limit, so a slot is free or is being released by a worker that has
		// already left its loop; Go waits at most for that release.
		e.group.Go(e.drain)
	}
}

func (e *goroutineExecutor) drain() error {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.workers--
			if e.workers == 0 {
				e.idle.Broadcast()
			}
			e.mu.Unlock()
			return nil
		}
		job := e.queue[0]
		e.queue[0] = executorJob{}
		e.queue = e.queue[1:]
		e.mu.Unlock()
		e.root.Send(job.replyTo, job.work())
	}
}

// wait blocks until every submitted job has run and its result was sent. It
// waits on the worker count, not on the errgroup: an actor may still Submit
// while the system closes, and errgroup's Wait must not overlap a Go.
func (e *goroutineExecutor) wait() {
	e.mu.Lock()
	for e.workers > 0 {
		e.idle.Wait()
	}
	e.mu.Unlock()
}
