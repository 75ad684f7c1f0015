package barrier

import (
	"errors"
	"fmt"
)

// Ledger is the coordinator's checkpoint bookkeeping as a pure state
// machine: which checkpoints are pending, which completed ones are retained,
// which savepoints exist, and, through the shared-state registry, which blobs
// each of them references. Every transition returns a Plan naming the
// checkpoints it aborted or subsumed and the blobs that became garbage; the
// Ledger performs no I/O.
//
// A checkpoint goes Begin → Ack (once per subtask, registering its files as
// they arrive) → Complete after its metadata is written, or → Abort. Files
// are registered on acknowledgement rather than at completion so that
// aborting one checkpoint never deletes a file another pending or completed
// checkpoint references: a blob is deleted only when nothing references it.
type Ledger struct {
	registry   *Registry
	retention  Retention
	lastID     CheckpointID // highest id begun or restored; ids only grow
	pending    map[CheckpointID]*pendingCheckpoint
	retained   map[CheckpointID]ownedBlob // metadata blobs of retained checkpoints
	savepoints map[CheckpointID]*savepointFiles
	exclusive  map[string]CheckpointID // savepoint blobs (pending or complete) → savepoint
}

type pendingCheckpoint struct {
	kind    Kind
	uploads map[string]struct{} // savepoints only: their exclusive blobs
}

type ownedBlob struct {
	name  string
	owned bool // false: restored without ownership, never deleted
}

type savepointFiles struct {
	metadata ownedBlob
	blobs    []string
}

// ErrNotPending: the checkpoint was never begun, or already completed or
// aborted. Acknowledgements and completions for it arrive too late.
var ErrNotPending = errors.New("checkpoint is not pending")

// NewLedger returns an empty ledger that retains the newest retain completed
// checkpoints.
func NewLedger(retain int) (*Ledger, error) {
	r, err := NewRetention(retain)
	if err != nil {
		return nil, err
	}
	return &Ledger{
		registry:   NewRegistry(),
		retention:  r,
		pending:    make(map[CheckpointID]*pendingCheckpoint),
		retained:   make(map[CheckpointID]ownedBlob),
		savepoints: make(map[CheckpointID]*savepointFiles),
		exclusive:  make(map[string]CheckpointID),
	}, nil
}

// Begin starts checkpoint or savepoint id, which must be newer than every id
// begun or restored before.
func (l *Ledger) Begin(id CheckpointID, kind Kind) error {
	if !kind.Valid() {
		return fmt.Errorf("begin %d: invalid kind %d", id, kind)
	}
	if id <= l.lastID {
		return fmt.Errorf("begin %s %d: ids must grow, last was %d", kind, id, l.lastID)
	}
	l.lastID = id
	l.pending[id] = &pendingCheckpoint{kind: kind, uploads: make(map[string]struct{})}
	return nil
}

// Ack registers one subtask's acknowledgement of checkpoint id and returns
// the state as it must appear in the metadata: placeholders resolved to the
// registered blobs, re-uploads of confirmed files replaced by the confirmed
// blob. The plan is valid even with an error: an acknowledgement that is
// late (ErrNotPending) or rejected leaves its uploads to be deleted, unless
// something live holds them. A rejected acknowledgement means the checkpoint
// cannot complete; the caller aborts it.
func (l *Ledger) Ack(id CheckpointID, sub SubtaskState) (SubtaskState, Plan, error) {
	p := l.pending[id]
	if p == nil {
		return SubtaskState{}, l.dropUploads(uploads(&sub)), fmt.Errorf("ack of subtask %d for %d: %w", sub.Index, id, ErrNotPending)
	}
	reject := func(err error) (SubtaskState, Plan, error) {
		return SubtaskState{}, l.dropUploads(uploads(&sub)), fmt.Errorf("ack of subtask %d for %s %d: %w", sub.Index, p.kind, id, err)
	}
	if err := sub.validate(p.kind, false); err != nil {
		return reject(err)
	}
	ups := uploads(&sub)
	for _, b := range ups {
		if owner, ok := l.exclusive[b]; ok && owner != id {
			return reject(fmt.Errorf("%w: blob %s belongs to savepoint %d", ErrConflictingSharedFile, b, owner))
		}
		if p.kind == KindSavepoint && l.registry.HasBlob(b) {
			return reject(fmt.Errorf("%w: savepoint blob %s is a shared checkpoint file", ErrConflictingSharedFile, b))
		}
	}
	if p.kind == KindSavepoint {
		for _, b := range ups {
			p.uploads[b] = struct{}{}
			l.exclusive[b] = id
		}
		return sub, Plan{}, nil
	}
	reg, err := l.registry.Register(id, subtaskRefs(&sub))
	if err != nil {
		return reject(err)
	}
	return withResolved(sub, reg.Resolved), l.finish(Plan{Delete: reg.Discard}), nil
}

// Abort aborts pending checkpoint id (declined, timed out, or a subtask
// failed) and releases what it referenced. Aborting an id that is not
// pending, including a repeated abort or one that arrives after completion,
// changes nothing.
func (l *Ledger) Abort(id CheckpointID) Plan {
	var plan Plan
	l.abort(id, &plan)
	return l.finish(plan)
}

func (l *Ledger) abort(id CheckpointID, plan *Plan) {
	p := l.pending[id]
	if p == nil {
		return
	}
	delete(l.pending, id)
	plan.Aborted = append(plan.Aborted, id)
	if p.kind == KindCheckpoint {
		plan.deleteBlobs(l.registry.Release(id)...)
		return
	}
	for b := range p.uploads {
		delete(l.exclusive, b)
	}
	for b := range p.uploads {
		if !l.live(b) {
			plan.deleteBlobs(b)
		}
	}
}

// dropUploads plans the deletion of uploads nothing live holds.
func (l *Ledger) dropUploads(blobs []string) Plan {
	var plan Plan
	for _, b := range blobs {
		if !l.live(b) {
			plan.deleteBlobs(b)
		}
	}
	return l.finish(plan)
}

// finish normalises a plan and asserts that it deletes nothing live.
func (l *Ledger) finish(plan Plan) Plan {
	plan.finish()
	for _, b := range plan.Delete {
		if l.live(b) {
			panic(fmt.Sprintf("barrier: plan deletes live blob %s", b))
		}
	}
	return plan
}

// Discard plans the deletion of the uploads of an acknowledgement that
// cannot be registered (it does not belong to the checkpoint it names),
// unless something live holds them.
func (l *Ledger) Discard(sub SubtaskState) Plan { return l.dropUploads(uploads(&sub)) }

// LastID is the newest id begun or restored; a new checkpoint must be newer.
func (l *Ledger) LastID() CheckpointID { return l.lastID }
