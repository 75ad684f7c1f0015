package subtask

import "testing"

// Each stage of the touches, over a build's block starts, covers every row
// once: no row is built untouched, none is touched twice.
func TestTouchSpansCoverEveryRowOnce(t *testing.T) {
	for _, n := range []int{0, 1, touchBlock - 1, touchBlock, touchBlock + 1, 5*touchBlock + 3} {
		for stage := range 3 {
			seen := make([]int, n)
			for i := 0; i < n; i += touchBlock {
				from, to := touchSpan(i, n, stage)
				for j := from; j < to; j++ {
					seen[j]++
				}
			}
			for j, c := range seen {
				if c != 1 {
					t.Fatalf("%d rows, stage %d: row %d touched %d times", n, stage, j, c)
				}
			}
		}
	}
}
