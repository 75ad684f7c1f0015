package runtime

import "fmt"

// coordinator is the checkpoint bookkeeping of one run: at most one
// checkpoint in flight, triggers that arrive meanwhile coalesce into the
// next one, and a checkpoint completes when every task acknowledged it and
// its snapshot is stored. It is a plain state machine; the job actor feeds
// it messages.
type coordinator struct {
	tasks     int
	nextID    int64
	pending   *pendingCheckpoint
	queued    bool     // a trigger waits for the pending checkpoint to end
	waiters   []uint64 // tokens of the queued trigger requests
	completed int64
}

type pendingCheckpoint struct {
	id      int64
	snaps   []TaskSnapshot // by global task
	acked   []bool
	missing int
	storing bool
}

func newCoordinator(tasks int, firstID int64) *coordinator {
	return &coordinator{tasks: tasks, nextID: firstID}
}

// request asks for a checkpoint on behalf of token (0: nobody waits for the
// id). It returns the id when a checkpoint starts now and the tokens of
// every request it serves.
func (c *coordinator) request(token uint64) (id int64, tokens []uint64, started bool) {
	if token != 0 {
		c.waiters = append(c.waiters, token)
	}
	c.queued = true
	return c.startQueued()
}

// startQueued starts the queued checkpoint if none is in flight.
func (c *coordinator) startQueued() (id int64, tokens []uint64, started bool) {
	if c.pending != nil || !c.queued {
		return 0, nil, false
	}
	id = c.nextID
	c.nextID++
	c.pending = &pendingCheckpoint{
		id:      id,
		snaps:   make([]TaskSnapshot, c.tasks),
		acked:   make([]bool, c.tasks),
		missing: c.tasks,
	}
	tokens, c.waiters, c.queued = c.waiters, nil, false
	return id, tokens, true
}

// ack records a task's acknowledgement and reports whether it was the last
// one. Acks of a checkpoint no longer pending are dropped.
func (c *coordinator) ack(id int64, task int, snap TaskSnapshot) (bool, error) {
	p := c.pending
	if p == nil || p.id != id || p.storing {
		return false, nil
	}
	if p.acked[task] {
		return false, fmt.Errorf("checkpoint %d acknowledged twice by task %d", id, task)
	}
	p.acked[task] = true
	p.snaps[task] = snap
	p.missing--
	if p.missing == 0 {
		p.storing = true
		return true, nil
	}
	return false, nil
}

// abort drops checkpoint id if it is pending and reports whether it was.
func (c *coordinator) abort(id int64) bool {
	if c.pending == nil || c.pending.id != id {
		return false
	}
	c.pending = nil
	return true
}

// stored completes the checkpoint whose snapshot was stored.
func (c *coordinator) stored(id int64) {
	if c.pending == nil || c.pending.id != id || !c.pending.storing {
		panic(fmt.Sprintf("runtime: checkpoint %d stored while not storing", id))
	}
	c.pending = nil
	c.completed = id
}
