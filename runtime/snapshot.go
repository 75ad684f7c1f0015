package runtime

import (
	"fmt"
	"slices"
	"sync"

	"github.com/lakestate/lakestate/keygroup"
)

// Snapshot is a completed checkpoint of a job: per operator, per subtask, the
// handle of its keyed state and its extras. It is immutable once stored.
type Snapshot struct {
	ID             int64
	Job            string
	MaxParallelism int
	Backend        string
	Operators      []OperatorSnapshot // in graph order
}

// OperatorSnapshot is the state of every subtask of one operator.
type OperatorSnapshot struct {
	Name     string
	Subtasks []TaskSnapshot // by subtask index
}

// TaskSnapshot is what one subtask acknowledged.
type TaskSnapshot struct {
	KeyGroups keygroup.Range
	// State is the backend's handle of the subtask's store; nil without one.
	State []byte
	// Extras is the operator's state outside the store.
	Extras []byte
}

// Operator returns the state of the named operator.
func (s *Snapshot) Operator(name string) (*OperatorSnapshot, bool) {
	for i := range s.Operators {
		if s.Operators[i].Name == name {
			return &s.Operators[i], true
		}
	}
	return nil, false
}

// CheckpointStore keeps the completed checkpoints of a job across its runs,
// in memory. It is safe for concurrent use.
type CheckpointStore struct {
	mu     sync.Mutex
	retain int
	snaps  []*Snapshot // ascending id
	maxID  int64
	runs   int
}

// NewCheckpointStore returns a store that keeps the newest retain snapshots,
// or all of them when retain is zero.
func NewCheckpointStore(retain int) *CheckpointStore {
	return &CheckpointStore{retain: retain}
}

// Put stores a completed checkpoint; ids must increase.
func (s *CheckpointStore) Put(snap *Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap.ID <= s.maxID {
		return fmt.Errorf("checkpoint %d stored after checkpoint %d", snap.ID, s.maxID)
	}
	s.maxID = snap.ID
	s.snaps = append(s.snaps, snap)
	if s.retain > 0 && len(s.snaps) > s.retain {
		s.snaps = slices.Delete(s.snaps, 0, len(s.snaps)-s.retain)
	}
	return nil
}

// Get returns the snapshot of checkpoint id, if retained.
func (s *CheckpointStore) Get(id int64) (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, snap := range s.snaps {
		if snap.ID == id {
			return snap, true
		}
	}
	return nil, false
}

// Latest returns the newest snapshot.
func (s *CheckpointStore) Latest() (*Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snaps) == 0 {
		return nil, false
	}
	return s.snaps[len(s.snaps)-1], true
}

// nextRun numbers the runs that use the store. A run's actors are named by
// it, so that a message addressed to a task of an ended run (a commit result
// or a poll timer still on its way) never reaches the same-named task of the
// next run.
func (s *CheckpointStore) nextRun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	return s.runs
}

// MaxID is the largest checkpoint id ever stored. A run continues numbering
// after it, so that an id never names two checkpoints: sink transactions are
// named by checkpoint id.
func (s *CheckpointStore) MaxID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxID
}
