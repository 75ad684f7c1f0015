package keygroup

import "fmt"

// Source is one old subtask's contribution to a new subtask: the key groups of
// old subtask Old that the new subtask owns.
type Source struct {
	Old   int   `json:"old"`
	Range Range `json:"range"`
}

// Assignment says where a new subtask's state comes from.
type Assignment struct {
	Subtask int   `json:"subtask"`
	Range   Range `json:"range"`
	// Sources overlap Range, ordered by old subtask index; their ranges
	// partition Range.
	Sources []Source `json:"sources"`
	// Aligned is true when exactly one old subtask owned exactly Range: its
	// state can be adopted wholesale, keeping its incremental history.
	Aligned bool `json:"aligned"`
}

// PlanRescale maps the old subtasks' key-group ranges (indexed by old subtask,
// as recorded in a checkpoint) onto newParallelism subtasks. The old ranges
// must partition [0, maxParallelism) in index order.
func PlanRescale(maxParallelism int, old []Range, newParallelism int) ([]Assignment, error) {
	if err := Validate(maxParallelism, newParallelism); err != nil {
		return nil, err
	}
	if err := checkPartition(maxParallelism, old); err != nil {
		return nil, err
	}
	out := make([]Assignment, newParallelism)
	first := 0 // old ranges are sorted, so each new range starts scanning where the last one ended
	for i := range out {
		r := RangeForSubtask(maxParallelism, newParallelism, i)
		a := Assignment{Subtask: i, Range: r}
		for j := first; j < len(old) && old[j].Start <= r.End; j++ {
			if ov := old[j].Intersect(r); !ov.IsEmpty() {
				a.Sources = append(a.Sources, Source{Old: j, Range: ov})
			}
			if old[j].End <= r.End {
				first = j + 1
			}
		}
		a.Aligned = len(a.Sources) == 1 && old[a.Sources[0].Old] == r
		out[i] = a
	}
	return out, nil
}

// checkPartition verifies that ranges are non-empty, contiguous in index order
// and cover exactly [0, maxParallelism).
func checkPartition(maxParallelism int, ranges []Range) error {
	if len(ranges) == 0 {
		return fmt.Errorf("keygroup: no old ranges")
	}
	next := 0
	for i, r := range ranges {
		if r.IsEmpty() {
			return fmt.Errorf("keygroup: old subtask %d has an empty range %v", i, r)
		}
		if r.Start != next {
			return fmt.Errorf("keygroup: old subtask %d range %v does not start at key group %d", i, r, next)
		}
		next = r.End + 1
	}
	if next != maxParallelism {
		return fmt.Errorf("keygroup: old ranges end at key group %d, want %d", next-1, maxParallelism-1)
	}
	return nil
}
