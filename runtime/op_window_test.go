package runtime

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// collect gathers a window operator's output, which is insert-only.
type collect struct{ rows []string }

func (c *collect) Emit(k Change, r Row) {
	if k != Insert {
		panic("window aggregate emitted " + k.String())
	}
	v := make([]int64, len(r))
	for i, d := range r {
		v[i] = d.Int()
	}
	c.rows = append(c.rows, fmt.Sprint(v))
}

func (c *collect) check(t *testing.T, want ...string) {
	t.Helper()
	if fmt.Sprint(c.rows) != fmt.Sprint(want) {
		t.Fatalf("fired %v, want %v", c.rows, want)
	}
}

// newTestWindowOp opens a window aggregate over rows [key, time, value]
// keyed by key, on a memory store.
func newTestWindowOp(t *testing.T, w Window, restored [][]byte, aggs ...Agg) (*windowOp, *subtask.Store) {
	t.Helper()
	in := Schema{{Name: "k", Type: table.BigInt()}, {Name: "t", Type: table.BigInt()}, {Name: "v", Type: table.BigInt()}}
	spec, _, err := newWindowAggSpec("w", in, []int{0}, aggs)
	if err != nil {
		t.Fatal(err)
	}
	op := &windowOp{spec: spec, window: w}
	store := subtask.NewStore(subtask.NewMemory())
	ctx := &OperatorContext{Store: store, KeyGroups: keygroup.Range{Start: 0, End: 127}, Restored: restored}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return op, store
}

func rec(key, time, value int64) Record {
	return Record{Kind: Insert, KeyGroup: int32(key), Row: Row{subtask.Int(key), subtask.Int(time), subtask.Int(value)}}
}

func TestWindowHopFiresOnWatermarkAndDropsLateRows(t *testing.T) {
	op, store := newTestWindowOp(t, Hop(1, 10, 5), nil, Count("n"), Max("m", 2))
	var out collect
	step := func(recs ...Record) {
		t.Helper()
		if err := op.Process(0, recs, &out); err != nil {
			t.Fatal(err)
		}
		store.EndBatch()
	}
	watermark := func(wm int64) {
		t.Helper()
		if err := op.Watermark(wm, &out); err != nil {
			t.Fatal(err)
		}
	}
	step(rec(1, 3, 7), rec(1, 7, 9), rec(2, 12, 1))
	// Time 3 lies in [-5, 5) and [0, 10); a watermark of 8 completes windows
	// ending at or before 9.
	watermark(8)
	out.check(t, "[1 -5 5 1 7]")
	watermark(9)
	out.check(t, "[1 -5 5 1 7]", "[1 0 10 2 9]")
	// Time 6 is late for [0, 10), which fired, and counts in [5, 15).
	step(rec(1, 6, 100))
	watermark(math.MaxInt64)
	out.check(t, "[1 -5 5 1 7]", "[1 0 10 2 9]", "[1 5 15 2 100]", "[2 5 15 1 1]", "[2 10 20 1 1]")
}

func TestWindowRestoredWatermarkKeepsLateRowsOut(t *testing.T) {
	op, store := newTestWindowOp(t, Tumble(1, 10), nil, Count("n"))
	var out collect
	if err := op.Watermark(19, &out); err != nil {
		t.Fatal(err)
	}
	extras, err := op.Snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	_ = store
	// Two old subtasks: the lower watermark rules.
	low, _ := (&windowOp{fired: 9}).Snapshot(1)
	op, store = newTestWindowOp(t, Tumble(1, 10), [][]byte{bytes.Join(extras, nil), bytes.Join(low, nil)}, Count("n"))
	if err := op.Process(0, []Record{rec(1, 5, 0), rec(1, 12, 0)}, &out); err != nil {
		t.Fatal(err)
	}
	store.EndBatch()
	if err := op.Watermark(math.MaxInt64, &out); err != nil {
		t.Fatal(err)
	}
	out.check(t, "[1 10 20 1]")
	if _, _, err := newWindowAggSpec("w", Schema{{Name: "s", Type: table.String()}}, []int{0}, []Agg{Sum("x", 0)}); err == nil {
		t.Error("SUM of a string column accepted")
	}
	bad := (&OperatorContext{Store: subtask.NewStore(subtask.NewMemory()), Restored: [][]byte{{1, 2}}})
	if err := (&windowOp{spec: op.spec, window: op.window}).Open(bad); err == nil {
		t.Error("a 2-byte restored watermark was accepted")
	}
}
