package compaction

import (
	"math/rand/v2"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// Updates spread over the whole key space make every run of a bucket span
// it, so a compaction is one key-disjoint section. Shaping still runs in
// steps of about StepBytes, cut by key range, with at most one step between
// two barrier rounds, and the invariants hold after every round and step.
// A session that restarts between two steps of a cut compaction (a crash)
// picks up the tree those steps left, partly hidden files and all.
func TestUniformUpdatesShapeInBoundedSteps(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "1mb"})
	const stepBytes = 24 << 10
	cfg := Config{StepBytes: stepBytes}
	s := e.session(cfg)
	rng := rand.New(rand.NewPCG(6, 18))
	var largest, tree int64
	bounded, restarts := 0, 0
	for i := int64(0); i < 30; i++ {
		all, up := puts(0, 12000, "v"+itoa(i)), map[int64]row{}
		for k := range int64(12000) {
			if rng.IntN(8) == 0 {
				up[k] = all[k]
			}
		}
		e.round(s, up, nil)
		if i%5 == 4 && pendingSteps(s) > 0 {
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
		if err := s.Finish(j.Run()); err != nil {
			t.Fatal(err)
		}
		if j.Kind == JobShape {
			largest = max(largest, s.Stats().ShapingBytes-before)
		}
		tree = max(tree, j.levels.TotalSize())
	}
	e.shapeAll(s)
	bounded += s.Stats().BoundedSteps
	t.Logf("%d bounded steps, %d restarts between steps; largest step wrote %d bytes, largest tree %d bytes", bounded, restarts, largest, tree)
	if bounded == 0 || restarts == 0 {
		t.Fatal("no step was bounded by key range, or no restart fell between two; the test does not exercise cut sections")
	}
	if largest > 3*stepBytes {
		t.Fatalf("a step wrote %d bytes, step size %d", largest, stepBytes)
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
