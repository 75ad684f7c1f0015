package runtime

import (
	"slices"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// A selection becomes runs of consecutive columns of one side; a column
// out of order, repeated or from the other side starts a new run.
func TestJoinSpans(t *testing.T) {
	l := func(c int) JoinColumn { return JoinColumn{Col: c} }
	r := func(c int) JoinColumn { return JoinColumn{Right: true, Col: c} }
	sel := []JoinColumn{l(0), l(1), l(2), r(1), r(2), l(3), l(3), r(0), l(5), l(4)}
	want := []joinSpan{
		{col: 0, n: 3, at: 0}, {right: true, col: 1, n: 2, at: 3}, {col: 3, n: 1, at: 5},
		{col: 3, n: 1, at: 6}, {right: true, col: 0, n: 1, at: 7}, {col: 5, n: 1, at: 8}, {col: 4, n: 1, at: 9},
	}
	if got := joinSpans(sel); !slices.Equal(got, want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	o := &joinOp{spec: &joinSpec{width: len(sel), spans: want}}
	left, right := Row{subtask.Int(10), subtask.Int(11), subtask.Int(12), subtask.Int(13), subtask.Int(14), subtask.Int(15)}, Row{subtask.Int(20), subtask.Int(21), subtask.Int(22)}
	got := o.project(left, right)
	for i, jc := range sel {
		from := left
		if jc.Right {
			from = right
		}
		if got[i] != from[jc.Col] {
			t.Fatalf("column %d is %v, want %v", i, got[i], from[jc.Col])
		}
	}
}
