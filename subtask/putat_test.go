package subtask_test

import (
	"fmt"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// PutAt and DeleteAt write the keys of the last GetBatch by their index,
// and land where Put and Delete of those keys would: on keys the buffer
// held, keys read from the table, keys absent, and repeated keys (written
// through any of their indexes), in value and list states, across a flush.
func TestPutAtWritesTheKeyRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		s := subtask.NewStore(bc.fresh(t))
		t.Cleanup(func() { s.Backend().Close() })
		agg := must[*subtask.ValueState](t)(s.Value(aggLayout(0)))
		top := must[*subtask.ListState](t)(s.List(topLayout()))
		elem := func(k, v int64) subtask.Row { return subtask.Row{subtask.Int(v), subtask.Str(fmt.Sprint(k))} }
		for k := int64(1); k <= 3; k++ {
			agg.Put(key(k), row(k, 0))
			top.Put(key(k), []subtask.Row{elem(k, 0)})
		}
		must[subtask.Checkpoint](t)(s.Flush(1))
		agg.Put(key(4), row(4, 0)) // buffered, not committed
		top.Put(key(4), []subtask.Row{elem(4, 0)})
		s.EndBatch()

		// Keys 1 (committed), 4 (buffered), 7 (absent), 2 (committed,
		// deleted), 3 (committed, untouched); 1 and 7 written through a
		// later index than their first.
		ks := []int64{1, 4, 7, 1, 2, 7, 3}
		if _, err := agg.GetBatch(keys(ks...), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := top.GetBatch(keys(ks...), nil); err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{3, 1, 5} {
			k := ks[i]
			agg.PutAt(i, row(k, 10*k))
			top.PutAt(i, []subtask.Row{elem(k, 10*k), elem(k, 1)})
		}
		agg.DeleteAt(4)
		top.DeleteAt(4)
		s.EndBatch()
		must[subtask.Checkpoint](t)(s.Flush(2))

		want := map[int64]string{
			1: "[1 10]", 2: "[]", 3: "[3 0]", 4: "[4 40]", 7: "[7 70]",
		}
		wantList := map[int64]string{
			1: fmt.Sprint([]subtask.Row{elem(1, 10), elem(1, 1)}),
			2: "[]",
			3: fmt.Sprint([]subtask.Row{elem(3, 0)}),
			4: fmt.Sprint([]subtask.Row{elem(4, 40), elem(4, 1)}),
			7: fmt.Sprint([]subtask.Row{elem(7, 70), elem(7, 1)}),
		}
		for _, k := range []int64{1, 2, 3, 4, 7} {
			vals, err := agg.GetBatch(keys(k), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := "[]"
			if vals[0] != nil {
				got = fmt.Sprint([]int64{vals[0][0].Int(), vals[0][1].Int()})
			}
			if got != want[k] {
				t.Fatalf("value of key %d: %s, want %s", k, got, want[k])
			}
			lists, err := top.GetBatch(keys(k), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(lists[0]); got != wantList[k] {
				t.Fatalf("list of key %d: %s, want %s", k, got, wantList[k])
			}
		}
	})
}
