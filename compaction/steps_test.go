package compaction

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// Updates spread over the whole key space make every run of a bucket span
// it, so a compaction is one key-disjoint section. Shaping still runs in
// steps of about StepBytes, cut by key range, with at most one step between
// two barrier rounds, and the invariants hold after every round and step.
// A session that restarts between two steps of a cut compaction (a crash)
// picks up the tree those steps left, partly hidden files and all.
//
// What bounds a step: a piece of a cut section reads guide files of its
// output level worth at most StepBytes by the splitter's estimate, or one
// guide when a single one is estimated above it; guides are rewrite outputs,
// rolled at StepBytes/2. So a piece writes about StepBytes, and 3*StepBytes
// leaves room for keys not spread exactly alike over the runs. A step that
// is not cut reads more than StepBytes only when its section cannot be cut
// (fewer than two files at its output level, e.g. the first compaction of
// runs straight from level 0): it is bounded by the tree, not by StepBytes,
// and writes each key of the table at most once.
func TestUniformUpdatesShapeInBoundedSteps(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "1mb"})
	const stepBytes = 24 << 10
	cfg := Config{StepBytes: stepBytes}
	s := e.session(cfg)
	rng := rand.New(rand.NewPCG(6, 18))
	const keys = 12000
	var largest, uncut, tree int64
	bounded, restarts, cut := 0, 0, 0
	for i := int64(0); i < 30; i++ {
		all, up := puts(0, keys, "v"+itoa(i)), map[int64]row{}
		for k := range int64(keys) {
			if rng.IntN(8) == 0 {
				up[k] = all[k]
			}
		}
		e.round(s, up, nil)
		// Every other time a cut compaction has steps left, the session
		// restarts before the next one.
		if pendingSteps(s) > 0 {
			cut++
		}
		if pendingSteps(s) > 0 && cut%2 == 1 {
			bounded += s.Stats().BoundedSteps
			s.Close()
			s = e.session(cfg)
			restarts++
			continue
		}
		j := s.NextJob(e.now)
		if j == nil {
			continue
		}
		before := s.Stats().ShapingBytes
		r := j.Run()
		if err := s.Finish(r); err != nil {
			t.Fatal(err)
		}
		tree = max(tree, j.levels.TotalSize())
		if j.Kind != JobShape {
			continue
		}
		if slices.ContainsFunc(j.plan.Steps, func(st table.CompactStep) bool { return st.Bounds != nil }) {
			largest = max(largest, s.Stats().ShapingBytes-before)
		} else {
			checkUncut(t, s.cmp, j.plan, stepBytes)
			var rows int64
			for _, f := range newFiles(r.res) {
				rows += f.RowCount
			}
			if rows > keys {
				t.Fatalf("a step wrote %d rows; the table has %d keys", rows, keys)
			}
			uncut = max(uncut, s.Stats().ShapingBytes-before)
		}
	}
	e.shapeAll(s)
	bounded += s.Stats().BoundedSteps
	t.Logf("%d bounded steps, %d restarts between steps; largest step cut by key range wrote %d bytes, largest uncut step %d, largest tree %d bytes",
		bounded, restarts, largest, uncut, tree)
	if bounded == 0 || restarts == 0 {
		t.Fatal("no step was bounded by key range, or no restart fell between two; the test does not exercise cut sections")
	}
	if largest > 3*stepBytes {
		t.Fatalf("a step cut by key range wrote %d bytes, step size %d", largest, stepBytes)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	e.checkModel(nil)
}

// pendingSteps counts the steps left of the compactions in progress.
func pendingSteps(s *Session) int {
	n := 0
	for _, tr := range s.trees {
		n += len(tr.pending)
	}
	return n
}

// checkUncut fails unless every section of an uncut step that reads more
// than maxBytes is one the splitter cannot cut.
func checkUncut(t *testing.T, cmp table.KeyComparator, p table.CompactPlan, maxBytes int64) {
	t.Helper()
	for _, st := range p.Steps {
		for _, section := range st.Sections {
			if sectionBytes(section) > maxBytes && cutSection(cmp, section, p.OutputLevel, maxBytes, st.Lookup) != nil {
				t.Fatalf("a step rewrote a section of %d bytes whole that could be cut into steps of %d", sectionBytes(section), maxBytes)
			}
		}
	}
}

// A compaction is cut into no more steps than the rounds landing while it
// runs find free levels for, at the pace of the last busy interval: once
// they are taken, every round would merge into level 1. Steps grow up to
// maxStepGrowth times StepBytes, and never shrink below StepBytes.
func TestStepBytesFitTheFreeLevels(t *testing.T) {
	whole := func(l *table.Levels) table.CompactPlan {
		var section []table.SortedRun
		for _, r := range l.SortedRuns() {
			section = append(section, r.Run)
		}
		return table.CompactPlan{OutputLevel: l.MaxLevel(), Steps: []table.CompactStep{{Kind: table.StepRewrite, Sections: [][]table.SortedRun{section}}}}
	}
	tests := []struct {
		name  string
		sizes []int64 // levels 1..8
		pace  int
		want  int64
	}{
		// 800 bytes; levels 1, 2 and 7 are free (8 is the output): 3 steps.
		{name: "three free levels", sizes: []int64{0, 0, 200, 200, 200, 200, 0, 0}, want: 266},
		{name: "two steps an interval", sizes: []int64{0, 0, 200, 200, 200, 200, 0, 0}, pace: 2, want: 133},
		{name: "fast enough for StepBytes", sizes: []int64{0, 0, 200, 200, 200, 200, 0, 0}, pace: 10, want: 100},
		{name: "no free level: one step, bounded", sizes: []int64{100, 100, 100, 100, 100, 100, 100, 1000}, want: 400},
		{name: "small compaction", sizes: []int64{0, 0, 0, 0, 0, 0, 40, 50}, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{cfg: Config{StepBytes: 100}, pace: tt.pace}
			l := levelsOfSizes(t, tt.sizes...)
			if got := s.stepBytes(l, whole(l)); got != tt.want {
				t.Fatalf("stepBytes = %d, want %d", got, tt.want)
			}
		})
	}
}
