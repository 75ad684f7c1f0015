package subtask_test

import (
	"fmt"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// A list batch that repeats keys the buffer lacks reads each of them once:
// every record of a key gets the committed list (or none), the probe asks
// for the distinct keys only, and a write after the batch replaces the list
// its reads returned.
func TestListGetBatchRepeatedMisses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		s := subtask.NewStore(bc.fresh(t))
		t.Cleanup(func() { s.Backend().Close() })
		top := must[*subtask.ListState](t)(s.List(topLayout()))
		elem := func(k int64, id string) subtask.Row { return subtask.Row{subtask.Int(k), subtask.Str(id)} }
		for k := int64(1); k <= 4; k++ {
			top.Put(key(k), []subtask.Row{elem(k, "a"), elem(k, "b")})
		}
		must[subtask.Checkpoint](t)(s.Flush(1))

		ks := []int64{2, 9, 2, 4, 9, 2, 4}
		before := s.Stats()
		lists, err := top.GetBatch(keys(ks...), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range ks {
			want := "[]"
			if k <= 4 {
				want = fmt.Sprint([]subtask.Row{elem(k, "a"), elem(k, "b")})
			}
			if got := fmt.Sprint(lists[i]); got != want {
				t.Fatalf("record %d (key %d): list %s, want %s", i, k, got, want)
			}
		}
		after := s.Stats()
		if bc.name != "memory" {
			if probes, probed := after.Probes-before.Probes, after.ProbedKeys-before.ProbedKeys; probes != 1 || probed != 3 {
				t.Fatalf("%d probes of %d keys, want 1 of 3 (keys 2, 4, 9)", probes, probed)
			}
		}
		top.Put(key(2), []subtask.Row{elem(2, "c")})
		top.Put(key(9), []subtask.Row{elem(9, "d")})
		s.EndBatch()
		must[subtask.Checkpoint](t)(s.Flush(2))

		lists, err = top.GetBatch(keys(9, 2, 4, 2), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			fmt.Sprint([]subtask.Row{elem(9, "d")}),
			fmt.Sprint([]subtask.Row{elem(2, "c")}),
			fmt.Sprint([]subtask.Row{elem(4, "a"), elem(4, "b")}),
			fmt.Sprint([]subtask.Row{elem(2, "c")}),
		}
		for i, l := range lists {
			if got := fmt.Sprint(l); got != want[i] {
				t.Fatalf("after the flush, record %d: list %s, want %s", i, got, want[i])
			}
		}
	})
}
