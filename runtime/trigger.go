package runtime

// triggers is the job's side of checkpoint triggering: at most one
// checkpoint in flight (barrier alignment is per id, so barrier n+1 must
// never overtake n), requests that arrive meanwhile coalesce into the next
// one. The coordinator numbers and completes checkpoints; triggers only
// decides when to ask it. It is a plain state machine; the job actor feeds
// it messages.
type triggers struct {
	ready bool // the tasks run: triggers may go out
	// asking: a trigger was sent and not answered; inFlight: the checkpoint
	// it started, until it completes or aborts.
	asking   bool
	inFlight int64
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
	if !t.ready || t.asking || t.inFlight != 0 || !t.queued {
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
	t.inFlight = id
	return tokens
}

// ended records that checkpoint id completed or aborted, and reports whether
// it was the one in flight.
func (t *triggers) ended(id int64) bool {
	if t.inFlight != id {
		return false
	}
	t.inFlight = 0
	return true
}
