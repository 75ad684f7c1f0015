package barrier

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
)

// metadataWithParallelism is a checkpoint of operator "agg" at parallelism p
// (max parallelism 128), one table per subtask.
func metadataWithParallelism(p int) *Metadata {
	op := OperatorState{ID: "agg", Parallelism: p, MaxParallelism: 128}
	for i := range p {
		b := fmt.Sprintf("p%d-s%d", p, i)
		op.Subtasks = append(op.Subtasks, SubtaskState{
			Index: i, KeyGroups: keygroup.RangeForSubtask(128, p, i), Backend: "paimon", BackendID: b,
			Tables: []TableState{{Name: "values", SnapshotID: 1, Files: []FileRef{
				{Path: "snapshot/snapshot-1", Size: 1, Blob: "shared/chk-1/" + b + "/values/snapshot/snapshot-1", Uploaded: true},
			}}},
		})
	}
	return &Metadata{ID: 1, Kind: KindCheckpoint, JobID: "j", Operators: []OperatorState{op}}
}

type wantSource struct {
	backend    string
	start, end int
}

// The rescale chains 1→2→3 and 3→2→1 at max parallelism 128: each new
// subtask restores exactly the overlapping old subtasks, with exact ranges.
func TestPlanRestoreRescaleChains(t *testing.T) {
	cases := []struct {
		oldP, newP int
		want       [][]wantSource // per new subtask
		aligned    []bool
	}{
		{1, 2, [][]wantSource{{{"p1-s0", 0, 63}}, {{"p1-s0", 64, 127}}}, []bool{false, false}},
		{2, 3, [][]wantSource{
			{{"p2-s0", 0, 42}},
			{{"p2-s0", 43, 63}, {"p2-s1", 64, 85}},
			{{"p2-s1", 86, 127}},
		}, []bool{false, false, false}},
		{3, 2, [][]wantSource{
			{{"p3-s0", 0, 42}, {"p3-s1", 43, 63}},
			{{"p3-s1", 64, 85}, {"p3-s2", 86, 127}},
		}, []bool{false, false}},
		{2, 1, [][]wantSource{{{"p2-s0", 0, 63}, {"p2-s1", 64, 127}}}, []bool{false}},
		{2, 2, [][]wantSource{{{"p2-s0", 0, 63}}, {{"p2-s1", 64, 127}}}, []bool{true, true}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dto%d", c.oldP, c.newP), func(t *testing.T) {
			m := metadataWithParallelism(c.oldP)
			plan, err := PlanRestore(m, "agg", c.newP)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan) != c.newP {
				t.Fatalf("%d subtasks planned", len(plan))
			}
			for i, r := range plan {
				if r.Subtask != i || r.KeyGroups != keygroup.RangeForSubtask(128, c.newP, i) || r.Aligned != c.aligned[i] {
					t.Fatalf("subtask %d: %+v", i, r)
				}
				if len(r.Sources) != len(c.want[i]) {
					t.Fatalf("subtask %d: %d sources, want %d", i, len(r.Sources), len(c.want[i]))
				}
				for j, s := range r.Sources {
					w := c.want[i][j]
					if s.State.BackendID != w.backend || s.KeyGroups != (keygroup.Range{Start: w.start, End: w.end}) {
						t.Fatalf("subtask %d source %d = %s %v, want %+v", i, j, s.State.BackendID, s.KeyGroups, w)
					}
					if s.State != &m.Operators[0].Subtasks[s.State.Index] {
						t.Fatalf("source does not point into the metadata")
					}
				}
			}
		})
	}
}

func TestPlanRestoreErrors(t *testing.T) {
	m := metadataWithParallelism(2)
	if _, err := PlanRestore(m, "new-operator", 2); !errors.Is(err, ErrNoOperatorState) {
		t.Fatalf("unknown operator: %v", err)
	}
	if _, err := PlanRestore(m, "agg", 129); err == nil {
		t.Fatalf("parallelism above max parallelism accepted")
	}
	if _, err := PlanRestore(m, "agg", 0); err == nil {
		t.Fatalf("parallelism 0 accepted")
	}
}
