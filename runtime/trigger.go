package runtime

import "slices"

// triggers is the job's side of checkpoint triggering: at most one
// checkpoint in flight, or with overlap two, the second started only once
// every task ended the first one's sync phase (a task is in one sync phase
// at a time, and barrier n+1 follows n down every channel); requests that
// arrive meanwhile coalesce into the next one. The coordinator numbers and
// completes checkpoints; triggers only decides when to ask it. It is a
// plain state machine; the job actor feeds it messages.
type triggers struct {
	ready bool // the tasks run: triggers may go out
	// overlap: a second checkpoint may start once all tasks of the job
	// (tasks of them) ended the sync phase of the first.
	overlap bool
	tasks   int
	// asking: a trigger was sent and not answered; inFlight: the
	// checkpoints it started, oldest first, until they complete or abort;
	// syncing: the newest of them while some task is in its sync phase,
	// synced: the tasks that ended it.
	asking   bool
	inFlight []int64
	syncing  int64
	synced   int
	queued   bool
	waiters  []uint64 // tokens of the queued requests
	asked    []uint64 // tokens the trigger in the air serves
}

// request asks for a checkpoint on behalf of token (0: nobody waits for
// its id) and reports whether a trigger should go out now.
func (t *triggers) request(token uint64) bool {
	if token != 0 {
		t.waiters = append(t.waiters, token)
	}
	t.queued = true
	return t.next()
}

// next reports whether the queued request should be sent as a trigger now,
// and if so takes it.
func (t *triggers) next() bool {
	if !t.ready || t.asking || !t.queued {
		return false
	}
	if len(t.inFlight) > 0 && (!t.overlap || len(t.inFlight) > 1 || t.syncing != 0) {
		return false
	}
	t.asking, t.queued = true, false
	t.asked, t.waiters = t.waiters, nil
	return true
}

// triggered records the coordinator's answer and returns the tokens it
// serves. A refused trigger (busy) is queued again.
func (t *triggers) triggered(id int64, busy bool) []uint64 {
	t.asking = false
	tokens := t.asked
	t.asked = nil
	if busy {
		t.queued = true
		t.waiters = append(tokens, t.waiters...)
		return nil
	}
	t.inFlight = append(t.inFlight, id)
	t.syncing, t.synced = id, 0
	return tokens
}

// withdraw takes back a trigger that next let go but the job did not send
// (the run has its final checkpoint): its requests stay queued.
func (t *triggers) withdraw() {
	t.asking = false
	t.waiters = append(t.asked, t.waiters...)
	t.asked = nil
}

// taskSynced records that a task ended the sync phase of checkpoint id and
// reports whether that was the last task of the newest checkpoint in
// flight.
func (t *triggers) taskSynced(id int64) bool {
	if id != t.syncing {
		return false
	}
	t.synced++
	if t.synced < t.tasks {
		return false
	}
	t.syncing = 0
	return true
}

// ended records that checkpoint id completed or aborted, and reports whether
// it was in flight.
func (t *triggers) ended(id int64) bool {
	i := slices.Index(t.inFlight, id)
	if i < 0 {
		return false
	}
	t.inFlight = slices.Delete(t.inFlight, i, i+1)
	if t.syncing == id {
		t.syncing = 0
	}
	return true
}
