package compaction

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// runLevels lists the levels that hold a run in bucket 0, ascending.
func runLevels(s *Session) []int {
	var out []int
	for _, tr := range s.trees {
		for _, r := range tr.levels.SortedRuns() {
			out = append(out, r.Level)
		}
	}
	return out
}

// Without shaping, every round upgrades its level-0 file into the level
// above the last one until every level the stop trigger allows holds a run;
// only the round after that merges into level 1.
func TestRoundsUpgradeUntilTheStopTrigger(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionNumSortedRunTrigger: "2", table.OptionNumSortedRunStop: "4"})
	s := e.session(Config{})
	if got := s.opts.NumLevels; got != 5 {
		t.Fatalf("session levels = %d, want the stop trigger + 1 = 5 (schema default: trigger + 1 = 3)", got)
	}
	for i := int64(0); i < 4; i++ {
		e.round(s, puts(i*10, i*10+100, "v"+itoa(i)), nil)
		if st := s.Stats(); st.RoundBytes != 0 {
			t.Fatalf("round %d rewrote %d bytes with a level free", i+1, st.RoundBytes)
		}
	}
	if got := runLevels(s); len(got) != 4 || got[0] != 1 {
		t.Fatalf("runs at levels %v after four rounds, want 1..4", got)
	}
	e.round(s, puts(0, 50, "last"), nil)
	if s.Stats().RoundBytes == 0 {
		t.Fatal("the round with every level occupied did not merge into level 1")
	}
	e.checkModel(nil)
}

// A round that finds level 1 occupied and a level below it free moves the
// runs above that level down in its own commit and upgrades into level 1,
// whether or not shaping got to it first.
func TestRoundShiftsInsteadOfMergingIntoLevel1(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	e.round(s, puts(0, 100, "a"), nil)
	e.round(s, puts(50, 150, "b"), nil)
	before := runLevels(s)
	// Move every run to the top, as a restore or a compaction writing to
	// level 1 leaves them: level 1 occupied, the levels below free.
	for _, tr := range s.trees {
		var del, add []table.DataFileMeta
		for _, r := range tr.levels.SortedRuns() {
			for _, f := range r.Run.Files {
				del = append(del, f)
				f.Level = int32(r.Level - before[0] + 1)
				add = append(add, f)
			}
		}
		res := table.CompactResult{Deleted: del, Added: add, DVs: tr.dvs.Clone()}
		work := []bucketChange{{key: tr.key, res: res}}
		cr, err := s.commit(work, e.now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.applyOwn(cr.SnapshotID, work); err != nil {
			t.Fatal(err)
		}
	}
	if got := runLevels(s); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("runs at levels %v, want 1 and 2", got)
	}
	e.round(s, puts(20, 120, "c"), nil)
	st := s.Stats()
	if st.RoundBytes != 0 || st.RoundShifts != 1 {
		t.Fatalf("round rewrote %d bytes with %d shifts, want a shift and no rewrite", st.RoundBytes, st.RoundShifts)
	}
	if got := runLevels(s); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("runs at levels %v, want 1, 2 and 3", got)
	}
	e.checkModel(nil)
	// The session's view is what a fresh walk of the table finds.
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
