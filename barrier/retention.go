package barrier

import "fmt"

// Retention keeps the ids of the last Keep completed checkpoints. Savepoints
// never enter it: they are neither subsumed by checkpoints nor subsume them.
type Retention struct {
	keep int
	ids  []CheckpointID // ascending
}

// NewRetention returns a retention that keeps the newest keep checkpoints;
// keep must be at least 1 (the latest completed checkpoint is never
// subsumed).
func NewRetention(keep int) (Retention, error) {
	if keep < 1 {
		return Retention{}, fmt.Errorf("retention must keep at least 1 checkpoint, not %d", keep)
	}
	return Retention{keep: keep}, nil
}

// Add records a completed checkpoint, newer than every retained one, and
// returns the checkpoints it subsumes, oldest first.
func (r *Retention) Add(id CheckpointID) ([]CheckpointID, error) {
	if n := len(r.ids); n > 0 && id <= r.ids[n-1] {
		return nil, fmt.Errorf("checkpoint %d completes after newer checkpoint %d", id, r.ids[n-1])
	}
	r.ids = append(r.ids, id)
	if len(r.ids) <= r.keep {
		return nil, nil
	}
	cut := len(r.ids) - r.keep
	subsumed := append([]CheckpointID(nil), r.ids[:cut]...)
	r.ids = append(r.ids[:0], r.ids[cut:]...)
	return subsumed, nil
}

// IDs returns the retained checkpoints, oldest first.
func (r *Retention) IDs() []CheckpointID { return append([]CheckpointID(nil), r.ids...) }

// Latest returns the newest retained checkpoint.
func (r *Retention) Latest() (CheckpointID, bool) {
	if len(r.ids) == 0 {
		return 0, false
	}
	return r.ids[len(r.ids)-1], true
}
