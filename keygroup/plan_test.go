package keygroup

import (
	"reflect"
	"testing"
)

func mustRanges(t *testing.T, maxP, p int) []Range {
	t.Helper()
	r, err := Ranges(maxP, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func src(old, start, end int) Source { return Source{Old: old, Range: Range{start, end}} }

// The rescale chains Flink's rescaling test walks (1→2→3 and 3→2→1), at the
// engine's default max parallelism of 128, with exact ranges.
func TestPlanRescaleChains(t *testing.T) {
	cases := []struct {
		name       string
		oldP, newP int
		want       []Assignment
	}{
		{"1to2", 1, 2, []Assignment{
			{Subtask: 0, Range: Range{0, 63}, Sources: []Source{src(0, 0, 63)}},
			{Subtask: 1, Range: Range{64, 127}, Sources: []Source{src(0, 64, 127)}},
		}},
		{"2to3", 2, 3, []Assignment{
			{Subtask: 0, Range: Range{0, 42}, Sources: []Source{src(0, 0, 42)}},
			{Subtask: 1, Range: Range{43, 85}, Sources: []Source{src(0, 43, 63), src(1, 64, 85)}},
			{Subtask: 2, Range: Range{86, 127}, Sources: []Source{src(1, 86, 127)}},
		}},
		{"3to2", 3, 2, []Assignment{
			{Subtask: 0, Range: Range{0, 63}, Sources: []Source{src(0, 0, 42), src(1, 43, 63)}},
			{Subtask: 1, Range: Range{64, 127}, Sources: []Source{src(1, 64, 85), src(2, 86, 127)}},
		}},
		{"2to1", 2, 1, []Assignment{
			{Subtask: 0, Range: Range{0, 127}, Sources: []Source{src(0, 0, 63), src(1, 64, 127)}},
		}},
		{"3to3", 3, 3, []Assignment{
			{Subtask: 0, Range: Range{0, 42}, Sources: []Source{src(0, 0, 42)}, Aligned: true},
			{Subtask: 1, Range: Range{43, 85}, Sources: []Source{src(1, 43, 85)}, Aligned: true},
			{Subtask: 2, Range: Range{86, 127}, Sources: []Source{src(2, 86, 127)}, Aligned: true},
		}},
		{"1to1", 1, 1, []Assignment{
			{Subtask: 0, Range: Range{0, 127}, Sources: []Source{src(0, 0, 127)}, Aligned: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanRescale(128, mustRanges(t, 128, c.oldP), c.newP)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// A new range that happens to equal an old one is aligned even when the
// parallelism changes.
func TestPlanRescaleAlignedOnlyWhenIdentical(t *testing.T) {
	got, err := PlanRescale(4, mustRanges(t, 4, 2), 3) // old [0,1][2,3]; new [0,1][2,2][3,3]
	if err != nil {
		t.Fatal(err)
	}
	aligned := []bool{got[0].Aligned, got[1].Aligned, got[2].Aligned}
	if !reflect.DeepEqual(aligned, []bool{true, false, false}) {
		t.Fatalf("aligned = %v, plan %+v", aligned, got)
	}
}

// Every key group is restored exactly once, from the old subtask that owned
// it, into the new subtask that owns it.
func TestPlanRescaleCoversEveryKeyGroupOnce(t *testing.T) {
	for _, maxP := range []int{1, 10, 128, 1000} {
		for _, oldP := range []int{1, 2, 3, 7, 10, 128} {
			for _, newP := range []int{1, 2, 3, 5, 10, 64, 128} {
				if oldP > maxP || newP > maxP {
					continue
				}
				old := mustRanges(t, maxP, oldP)
				plan, err := PlanRescale(maxP, old, newP)
				if err != nil {
					t.Fatal(err)
				}
				seen := make([]int, maxP)
				for _, a := range plan {
					covered := 0
					for _, s := range a.Sources {
						for kg := s.Range.Start; kg <= s.Range.End; kg++ {
							seen[kg]++
							if !old[s.Old].Contains(kg) || !a.Range.Contains(kg) {
								t.Fatalf("maxP=%d %d→%d: kg %d from old %d into new %d", maxP, oldP, newP, kg, s.Old, a.Subtask)
							}
						}
						covered += s.Range.Len()
					}
					if covered != a.Range.Len() {
						t.Fatalf("maxP=%d %d→%d: new %d covered %d of %d", maxP, oldP, newP, a.Subtask, covered, a.Range.Len())
					}
				}
				for kg, n := range seen {
					if n != 1 {
						t.Fatalf("maxP=%d %d→%d: key group %d restored %d times", maxP, oldP, newP, kg, n)
					}
				}
			}
		}
	}
}

func TestPlanRescaleRejectsBadOldRanges(t *testing.T) {
	bad := map[string][]Range{
		"none":     nil,
		"gap":      {{0, 10}, {12, 127}},
		"overlap":  {{0, 64}, {64, 127}},
		"short":    {{0, 63}, {64, 126}},
		"long":     {{0, 63}, {64, 128}},
		"late":     {{1, 127}},
		"empty":    {{0, 127}, Empty},
		"unsorted": {{64, 127}, {0, 63}},
	}
	for name, old := range bad {
		if _, err := PlanRescale(128, old, 2); err == nil {
			t.Errorf("%s: accepted %v", name, old)
		}
	}
	if _, err := PlanRescale(128, mustRanges(t, 128, 2), 129); err == nil {
		t.Errorf("new parallelism above max accepted")
	}
}
