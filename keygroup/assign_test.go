package keygroup

import (
	"slices"
	"testing"
)

func TestRangesExact(t *testing.T) {
	cases := []struct {
		maxP, p int
		want    []Range
	}{
		{128, 1, []Range{{0, 127}}},
		{128, 2, []Range{{0, 63}, {64, 127}}},
		{128, 3, []Range{{0, 42}, {43, 85}, {86, 127}}},
		{128, 128, nil}, // checked below: one key group each
		// Flink's RocksIncrementalCheckpointRescalingTest uses max parallelism 10.
		{10, 2, []Range{{0, 4}, {5, 9}}},
		{10, 3, []Range{{0, 3}, {4, 6}, {7, 9}}},
		{5, 4, []Range{{0, 1}, {2, 2}, {3, 3}, {4, 4}}},
	}
	for _, c := range cases {
		got, err := Ranges(c.maxP, c.p)
		if err != nil {
			t.Fatalf("Ranges(%d, %d): %v", c.maxP, c.p, err)
		}
		want := c.want
		if want == nil {
			for i := range c.p {
				want = append(want, Range{i, i})
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("Ranges(%d, %d) = %v, want %v", c.maxP, c.p, got, want)
		}
	}
}

// Every key group belongs to exactly one subtask, and SubtaskForKeyGroup
// agrees with RangeForSubtask, for every parallelism up to maxP.
func TestAssignmentIsAPartition(t *testing.T) {
	for _, maxP := range []int{1, 2, 3, 10, 97, 128, 130} {
		for p := 1; p <= maxP; p++ {
			ranges, err := Ranges(maxP, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkPartition(maxP, ranges); err != nil {
				t.Fatalf("maxP=%d p=%d: %v", maxP, p, err)
			}
			for i, r := range ranges {
				for kg := r.Start; kg <= r.End; kg++ {
					if got := SubtaskForKeyGroup(maxP, p, kg); got != i {
						t.Fatalf("maxP=%d p=%d: key group %d in range of subtask %d but SubtaskForKeyGroup says %d", maxP, p, kg, i, got)
					}
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	bad := [][2]int{{0, 1}, {128, 0}, {128, 129}, {UpperBoundMaxParallelism + 1, 1}, {-3, -3}}
	for _, b := range bad {
		if Validate(b[0], b[1]) == nil {
			t.Errorf("Validate(%d, %d) accepted", b[0], b[1])
		}
		if _, err := Ranges(b[0], b[1]); err == nil {
			t.Errorf("Ranges(%d, %d) accepted", b[0], b[1])
		}
	}
	if err := Validate(UpperBoundMaxParallelism, UpperBoundMaxParallelism); err != nil {
		t.Errorf("Validate at the upper bound: %v", err)
	}
}

func TestRangeForSubtaskPanicsOnBadIndex(t *testing.T) {
	for _, i := range []int{-1, 3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RangeForSubtask(128, 3, %d) did not panic", i)
				}
			}()
			RangeForSubtask(128, 3, i)
		}()
	}
}

func TestRangeOps(t *testing.T) {
	r := Range{10, 20}
	if r.Len() != 11 || Empty.Len() != 0 || !Empty.IsEmpty() || r.IsEmpty() {
		t.Fatalf("Len/IsEmpty wrong")
	}
	if !r.Contains(10) || !r.Contains(20) || r.Contains(9) || r.Contains(21) {
		t.Fatalf("Contains wrong")
	}
	if got := r.Intersect(Range{15, 30}); got != (Range{15, 20}) {
		t.Fatalf("Intersect = %v", got)
	}
	if got := r.Intersect(Range{21, 30}); !got.IsEmpty() {
		t.Fatalf("disjoint Intersect = %v", got)
	}
	if r.String() != "[10,20]" || Empty.String() != "[]" {
		t.Fatalf("String = %q, %q", r, Empty)
	}
}
