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
func TestUniformUpdatesShapeInBoundedSteps(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "1mb"})
	const stepBytes = 64 << 10
	s := e.session(Config{StepBytes: stepBytes})
	rng := rand.New(rand.NewPCG(6, 18))
	var largest, tree int64
	for i := int64(0); i < 40; i++ {
		up := map[int64]row{}
		for k, r := range puts(0, 40000, "v"+itoa(i)) {
			if rng.IntN(8) == 0 {
				up[k] = r
			}
		}
		e.round(s, up, nil)
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
	st := s.Stats()
	t.Logf("%d steps, %d bounded; largest step wrote %d bytes, largest tree %d bytes", st.Steps, st.BoundedSteps, largest, tree)
	if st.BoundedSteps == 0 {
		t.Fatal("no step was bounded by key range; the test does not exercise cut sections")
	}
	if largest > 3*stepBytes {
		t.Fatalf("a step wrote %d bytes, step size %d", largest, stepBytes)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	e.checkModel(nil)
}
