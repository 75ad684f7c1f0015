package barrier

import (
	"errors"
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
)

// SubtaskRestore says what one subtask of the new parallelism restores.
type SubtaskRestore struct {
	Subtask   int
	KeyGroups keygroup.Range
	// Aligned: a single old subtask owned exactly these key groups. The new
	// subtask adopts its files wholesale and keeps its BackendID, so the
	// next checkpoint stays incremental. Otherwise the subtask reads each
	// source under its key-group range and must start a new BackendID.
	Aligned bool
	Sources []RestoreSource
}

// RestoreSource is one old subtask's state and the part of it to keep.
type RestoreSource struct {
	State     *SubtaskState // points into the metadata
	KeyGroups keygroup.Range
}

// ErrNoOperatorState: the checkpoint holds no state for the operator (it is
// new to the job), so its subtasks start empty.
var ErrNoOperatorState = errors.New("checkpoint has no state for operator")

// PlanRestore maps operator operatorID's state in m onto newParallelism
// subtasks. The maximum parallelism cannot change across a restore: it fixes
// the key groups.
func PlanRestore(m *Metadata, operatorID string, newParallelism int) ([]SubtaskRestore, error) {
	op, ok := m.Operator(operatorID)
	if !ok {
		return nil, fmt.Errorf("restore %s %d: %w %q", m.Kind, m.ID, ErrNoOperatorState, operatorID)
	}
	old := make([]keygroup.Range, len(op.Subtasks))
	for i := range op.Subtasks {
		old[i] = op.Subtasks[i].KeyGroups
	}
	plan, err := keygroup.PlanRescale(op.MaxParallelism, old, newParallelism)
	if err != nil {
		return nil, fmt.Errorf("restore %s %d operator %q: %w", m.Kind, m.ID, operatorID, err)
	}
	out := make([]SubtaskRestore, len(plan))
	for i, a := range plan {
		r := SubtaskRestore{Subtask: a.Subtask, KeyGroups: a.Range, Aligned: a.Aligned}
		for _, s := range a.Sources {
			r.Sources = append(r.Sources, RestoreSource{State: &op.Subtasks[s.Old], KeyGroups: s.Range})
		}
		out[i] = r
	}
	return out, nil
}
