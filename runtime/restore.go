package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
)

// taskRestore is what one task of a restored run starts from.
type taskRestore struct {
	id int64
	// aligned: one old subtask owned exactly this task's key groups; its
	// state is adopted whole. Otherwise sources are clipped to the range.
	aligned bool
	state   []byte
	sources [][]byte
	// extras of every old subtask of the operator, by old index.
	extras [][]byte
}

// planRestore maps a snapshot onto the tasks of a plan, indexed by global
// task; an operator the snapshot lacks starts empty (nil).
func planRestore(snap *Snapshot, p *plan, backend string) ([]*taskRestore, error) {
	if snap.MaxParallelism != p.maxParallelism {
		return nil, fmt.Errorf("restore of checkpoint %d: max parallelism %d, the job has %d (it fixes the key groups and cannot change)",
			snap.ID, snap.MaxParallelism, p.maxParallelism)
	}
	if snap.Backend != backend {
		return nil, fmt.Errorf("restore of checkpoint %d: written by backend %q, the job runs %q", snap.ID, snap.Backend, backend)
	}
	out := make([]*taskRestore, len(p.tasks))
	for _, n := range p.nodes {
		op, ok := snap.Operator(n.name)
		if !ok {
			continue
		}
		extras := make([][]byte, len(op.Subtasks))
		old := make([]keygroup.Range, len(op.Subtasks))
		for i, st := range op.Subtasks {
			extras[i], old[i] = st.Extras, st.KeyGroups
			if !n.keyed() && st.State != nil {
				return nil, fmt.Errorf("restore of checkpoint %d: operator %q has keyed state but its inputs are not keyed", snap.ID, n.name)
			}
		}
		tasks := p.nodeTasks(n)
		for _, t := range tasks {
			out[t.global] = &taskRestore{id: snap.ID, extras: extras}
		}
		if !n.keyed() {
			continue
		}
		assign, err := keygroup.PlanRescale(p.maxParallelism, old, p.parallelism)
		if err != nil {
			return nil, fmt.Errorf("restore of checkpoint %d: operator %q: %w", snap.ID, n.name, err)
		}
		for _, a := range assign {
			r := out[tasks[a.Subtask].global]
			if a.Aligned {
				r.aligned, r.state = true, op.Subtasks[a.Sources[0].Old].State
				continue
			}
			for _, s := range a.Sources {
				if st := op.Subtasks[s.Old].State; st != nil {
					r.sources = append(r.sources, st)
				}
			}
		}
	}
	return out, nil
}
