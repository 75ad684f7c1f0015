package compaction

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// A bounded step follows its inputs when a round moves them down a level,
// unless one lands at the output level; an unbounded step does not.
func TestRefreshPlanFollowsShiftedInputs(t *testing.T) {
	file := func(name string, level int32) table.DataFileMeta {
		return table.DataFileMeta{FileName: name, Level: level, FileSize: 10, RowCount: 10, MinKey: []byte("a"), MaxKey: []byte("z")}
	}
	levels := func(files ...table.DataFileMeta) *table.Levels {
		l, err := table.NewLevels(bytes.Compare, files, 9)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	section := []table.SortedRun{{Files: []table.DataFileMeta{file("x", 1)}}, {Files: []table.DataFileMeta{file("y", 2)}}}
	bounded := table.CompactPlan{OutputLevel: 8, Steps: []table.CompactStep{{Kind: table.StepRewrite,
		Sections: [][]table.SortedRun{section}, Bounds: &table.KeyBounds{After: []byte("m")}}}}
	got, ok := refreshPlan(bytes.Compare, bounded, levels(file("x", 2), file("y", 3)))
	if !ok {
		t.Fatal("bounded plan stale after its inputs moved down a level")
	}
	var lv []int32
	for _, r := range got.Steps[0].Sections[0] {
		for _, f := range r.Files {
			lv = append(lv, f.Level)
		}
	}
	if !reflect.DeepEqual(lv, []int32{2, 3}) {
		t.Fatalf("refreshed inputs at levels %v, want 2 and 3", lv)
	}
	if section[0].Files[0].Level != 1 {
		t.Fatal("refreshPlan changed the plan it was given")
	}
	if _, ok := refreshPlan(bytes.Compare, bounded, levels(file("x", 7), file("y", 8))); ok {
		t.Fatal("bounded plan not stale with an input moved to the output level")
	}
	unbounded := bounded
	unbounded.Steps = []table.CompactStep{{Kind: table.StepRewrite, Sections: [][]table.SortedRun{section}}}
	if _, ok := refreshPlan(bytes.Compare, unbounded, levels(file("x", 2), file("y", 3))); ok {
		t.Fatal("unbounded plan not stale after its inputs moved")
	}
}
