package barrier

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lakestate/lakestate/internal/plant"
	"github.com/lakestate/lakestate/keygroup"
)

// OperatorSpec is one operator whose subtasks acknowledge every checkpoint.
type OperatorSpec struct {
	ID             string
	Name           string
	Parallelism    int
	MaxParallelism int
}

var (
	// ErrCheckpointTimeout: a checkpoint did not complete in time.
	ErrCheckpointTimeout = errors.New("checkpoint timed out")
	// ErrTooManyPending: a trigger found the maximum number of checkpoints
	// in flight.
	ErrTooManyPending = errors.New("too many checkpoints in flight")
)

// coordinatorIO is what the coordinator's state machine asks of its actor.
type coordinatorIO interface {
	// trigger tells the job to inject barrier id.
	trigger(id CheckpointID, kind Kind, timestampMillis int64)
	// write puts m's metadata on the executor and reports back.
	write(m *Metadata)
	notifyComplete(id CheckpointID, kind Kind, metadataBlob string)
	notifyAborted(id CheckpointID, err error)
	// execute deletes a plan's blobs on the executor: the metadata blobs
	// first, and the files only if every metadata blob is gone, so no
	// readable metadata ever names a deleted file.
	execute(plan Plan)
}

// inflight is a checkpoint the coordinator waits on.
type inflight struct {
	kind      Kind
	timestamp int64
	subtasks  [][]*SubtaskState // per operator, per subtask: the resolved acknowledgements
	missing   int
	writing   bool
}

// coordinatorState is the Coordinator actor's logic: it wraps the Ledger
// (what each checkpoint references) with what a running job adds: which
// subtasks must acknowledge, when a checkpoint is complete, and the order of
// metadata write, completion and notifications.
type coordinatorState struct {
	io            coordinatorIO
	ledger        *Ledger
	jobID         string
	ops           []OperatorSpec
	maxConcurrent int
	nextID        CheckpointID
	pending       map[CheckpointID]*inflight
	// abandoned are checkpoints aborted while their metadata write was in
	// flight: that metadata may still land, naming files an abort deletes.
	// Until every such write has returned, deletions are held, and then the
	// abandoned metadata goes first.
	abandoned map[CheckpointID]bool
	held      Plan
}

func newCoordinatorState(io coordinatorIO, ledger *Ledger, jobID string, ops []OperatorSpec, maxConcurrent int) (*coordinatorState, error) {
	if jobID == "" {
		return nil, fmt.Errorf("coordinator: empty job id")
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if op.ID == "" || seen[op.ID] {
			return nil, fmt.Errorf("coordinator: operator id %q empty or repeated", op.ID)
		}
		seen[op.ID] = true
		if err := keygroup.Validate(op.MaxParallelism, op.Parallelism); err != nil {
			return nil, fmt.Errorf("coordinator: operator %q: %w", op.ID, err)
		}
	}
	if maxConcurrent <= 0 {
		maxConcurrent = 1
	}
	return &coordinatorState{io: io, ledger: ledger, jobID: jobID, ops: ops, maxConcurrent: maxConcurrent,
		nextID: ledger.LastID() + 1, pending: map[CheckpointID]*inflight{}, abandoned: map[CheckpointID]bool{}}, nil
}

// begin starts a checkpoint or savepoint and tells the job to inject its
// barrier.
func (s *coordinatorState) begin(kind Kind, nowMillis int64) (CheckpointID, error) {
	if len(s.pending) >= s.maxConcurrent {
		return 0, fmt.Errorf("trigger %s: %w (%d)", kind, ErrTooManyPending, len(s.pending))
	}
	id := max(s.nextID, s.ledger.LastID()+1)
	if err := s.ledger.Begin(id, kind); err != nil {
		return 0, err
	}
	s.nextID = id + 1
	p := &inflight{kind: kind, timestamp: nowMillis, subtasks: make([][]*SubtaskState, len(s.ops))}
	for i, op := range s.ops {
		p.subtasks[i] = make([]*SubtaskState, op.Parallelism)
		p.missing += op.Parallelism
	}
	s.pending[id] = p
	s.io.trigger(id, kind, nowMillis)
	if p.missing == 0 {
		s.writeMetadata(id, p)
	}
	return id, nil
}

// ack registers one subtask's acknowledgement.
func (s *coordinatorState) ack(id CheckpointID, operator string, sub SubtaskState) {
	p := s.pending[id]
	if p == nil {
		// Late (aborted or completed meanwhile) or unknown: the ledger
		// plans the deletion of whatever it uploaded.
		_, plan, _ := s.ledger.Ack(id, sub)
		s.execute(plan)
		return
	}
	op := slices.IndexFunc(s.ops, func(o OperatorSpec) bool { return o.ID == operator })
	var problem string
	switch {
	case op < 0:
		problem = "names an operator the job does not have"
	case sub.Index < 0 || sub.Index >= s.ops[op].Parallelism:
		problem = fmt.Sprintf("names subtask %d of %d", sub.Index, s.ops[op].Parallelism)
	case p.subtasks[op][sub.Index] != nil:
		// A repeated acknowledgement: the first one stands, and the
		// ledger keeps every blob it registered.
		s.execute(s.ledger.Discard(sub))
		return
	case sub.KeyGroups != keygroup.RangeForSubtask(s.ops[op].MaxParallelism, s.ops[op].Parallelism, sub.Index):
		problem = fmt.Sprintf("claims key groups %v", sub.KeyGroups)
	}
	if problem != "" {
		s.execute(s.ledger.Discard(sub))
		s.abort(id, fmt.Errorf("acknowledgement of subtask %d of operator %q %s", sub.Index, operator, problem))
		return
	}
	resolved, plan, err := s.ledger.Ack(id, sub)
	s.execute(plan)
	if err != nil {
		s.abort(id, err)
		return
	}
	p.subtasks[op][sub.Index] = &resolved
	p.missing--
	if p.missing == 0 {
		s.writeMetadata(id, p)
	}
}

func (s *coordinatorState) writeMetadata(id CheckpointID, p *inflight) {
	m := &Metadata{ID: id, Kind: p.kind, TimestampMillis: p.timestamp, JobID: s.jobID}
	for i, op := range s.ops {
		os := OperatorState{ID: op.ID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
		for _, sub := range p.subtasks[i] {
			os.Subtasks = append(os.Subtasks, *sub)
		}
		m.Operators = append(m.Operators, os)
	}
	if err := m.Validate(); err != nil {
		s.abort(id, fmt.Errorf("checkpoint %d metadata: %w", id, err))
		return
	}
	p.writing = true
	s.io.write(m)
}

// decline aborts a checkpoint a subtask could not take.
func (s *coordinatorState) decline(id CheckpointID, operator string, subtask int, err error) {
	if p := s.pending[id]; p == nil || p.writing {
		return
	}
	s.abort(id, fmt.Errorf("subtask %d of operator %q declined: %w", subtask, operator, err))
}

// discardLeaked deletes again the blobs a subtask's failed or cancelled
// upload could not delete. No acknowledgement registered them (the upload
// never succeeded), so nothing live holds them; the ledger checks.
func (s *coordinatorState) discardLeaked(blobs []string) {
	if len(blobs) > 0 {
		s.execute(s.ledger.dropUploads(blobs))
	}
}

// timeout aborts a checkpoint still waiting for acknowledgements. One
// whose metadata is being written waits for the write: the metadata may land
// and then the checkpoint is complete.
func (s *coordinatorState) timeout(id CheckpointID) {
	if p := s.pending[id]; p == nil || p.writing {
		return
	}
	s.abort(id, ErrCheckpointTimeout)
}

// written handles the outcome of the metadata write of checkpoint id.
func (s *coordinatorState) written(id CheckpointID, name string, err error) {
	if s.abandoned[id] {
		// Aborted while writing: whatever landed is garbage, its metadata
		// before anything it may name.
		delete(s.abandoned, id)
		s.held.Delete = append([]string{name}, s.held.Delete...)
		if len(s.abandoned) == 0 {
			held := s.held
			s.held = Plan{}
			s.io.execute(held)
		}
		return
	}
	p := s.pending[id]
	if p == nil || !p.writing {
		panic(fmt.Sprintf("barrier: metadata of checkpoint %d written while not writing", id))
	}
	if err != nil {
		// The put may have landed even though it failed: delete it before
		// the files it names.
		delete(s.pending, id)
		plan := s.ledger.Abort(id)
		plan.Delete = append([]string{name}, plan.Delete...)
		s.io.notifyAborted(id, fmt.Errorf("checkpoint %d: metadata write: %w", id, err))
		s.execute(plan)
		return
	}
	delete(s.pending, id)
	plan, err := s.ledger.Complete(id, name)
	if err != nil {
		s.io.notifyAborted(id, err)
		s.execute(plan)
		return
	}
	s.io.notifyComplete(id, p.kind, name)
	for _, a := range plan.Aborted {
		if q := s.pending[a]; q != nil && q.writing {
			s.abandoned[a] = true
		}
		delete(s.pending, a)
		s.io.notifyAborted(a, fmt.Errorf("checkpoint %d: subsumed by completed checkpoint %d", a, id))
	}
	s.execute(plan)
}

// abort drops pending checkpoint id and releases what it referenced.
func (s *coordinatorState) abort(id CheckpointID, cause error) {
	p, ok := s.pending[id]
	if !ok {
		return
	}
	if p.writing {
		s.abandoned[id] = true
	}
	delete(s.pending, id)
	if plant.On(plant.AbortDeletesShared) {
		// What id references is listed now, before the release below.
		defer s.io.execute(Plan{Delete: s.ledger.registry.referencedBlobs(id)})
	}
	plan := s.ledger.Abort(id)
	s.io.notifyAborted(id, cause)
	s.execute(plan)
}

// execute deletes a plan's blobs, or holds them while an abandoned
// checkpoint's metadata write is in flight.
func (s *coordinatorState) execute(plan Plan) {
	if len(s.abandoned) > 0 {
		s.held.Delete = append(s.held.Delete, plan.Delete...)
		return
	}
	s.io.execute(plan)
}

// isMetadataBlob tells metadata from files: metadata goes first in a
// deletion, so a crash in the middle never leaves metadata naming deleted
// files.
func isMetadataBlob(name string) bool {
	_, _, ok := ParseMetadataBlobName(name)
	return ok || strings.HasSuffix(name, "/"+metadataFile)
}
