package subtask_test

import (
	"slices"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// Groups tells a batch's keys apart by the slots GetBatch gave them: keys
// buffered, committed or absent, repeated or not, and batches after writes
// (whose slots stayed through Put or were dropped at the batch's end)
// group exactly as their keys compare, in value and list states.
func TestGroupsFollowKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		s := subtask.NewStore(bc.fresh(t))
		t.Cleanup(func() { s.Backend().Close() })
		agg := must[*subtask.ValueState](t)(s.Value(aggLayout(0)))
		top := must[*subtask.ListState](t)(s.List(topLayout()))
		elem := func(k int64) subtask.Row { return subtask.Row{subtask.Int(k), subtask.Str("x")} }
		agg.Put(key(7), row(7, 1))
		top.Put(key(7), []subtask.Row{elem(7)})
		must[subtask.Checkpoint](t)(s.Flush(1))
		agg.Put(key(8), row(8, 1))
		top.Put(key(8), []subtask.Row{elem(8)})
		var of, first []int
		for round, ks := range [][]int64{
			{3, 1, 3, 2, 1, 1},
			{7, 8, 7, 9, 8, 3},
			{1},
			{5, 5, 5},
			{2, 3, 2, 7, 7, 1, 9},
		} {
			wantOf, wantFirst := groupsOf(ks)
			if _, err := agg.GetBatch(keys(ks...), nil); err != nil {
				t.Fatal(err)
			}
			of, first = agg.Groups(of, first)
			if !slices.Equal(of, wantOf) || !slices.Equal(first, wantFirst) {
				t.Fatalf("value state, round %d, keys %v: groups %v, firsts %v; want %v, %v", round, ks, of, first, wantOf, wantFirst)
			}
			if _, err := top.GetBatch(keys(ks...), nil); err != nil {
				t.Fatal(err)
			}
			of, first = top.Groups(of, first)
			if !slices.Equal(of, wantOf) || !slices.Equal(first, wantFirst) {
				t.Fatalf("list state, round %d, keys %v: groups %v, firsts %v; want %v, %v", round, ks, of, first, wantOf, wantFirst)
			}
			// Write some keys, so later batches meet slots of every kind.
			agg.Put(key(ks[0]), row(ks[0], int64(round)))
			top.Put(key(ks[0]), []subtask.Row{elem(int64(round))})
			s.EndBatch()
		}
	})
}

// groupsOf numbers keys' groups in the order of their first occurrences.
func groupsOf(ks []int64) (of, first []int) {
	seen := map[int64]int{}
	for i, k := range ks {
		g, ok := seen[k]
		if !ok {
			g = len(first)
			seen[k] = g
			first = append(first, i)
		}
		of = append(of, g)
	}
	return of, first
}
