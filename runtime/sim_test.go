package runtime_test

import (
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/runtime"
)

// A run in a simulation is determined by its seed: the same seed gives the
// same trace, checkpoints, restore and all. (Paimon stores are left out: their
// files' names and commit times come from outside the seed, so upload sizes,
// which the trace shows, differ from run to run.)
func TestSimulatedRunIsDeterministic(t *testing.T) {
	for _, name := range []string{"memory", "pebble"} {
		t.Run(name, func(t *testing.T) { simulatedRuns(t, name) })
	}
}

func simulatedRuns(t *testing.T, backend string) {
	be, err := runtime.OpenBackend(backend)
	if err != nil {
		t.Fatal(err)
	}
	trace := func(seed uint64) (uint64, int) {
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}})
		sys := sim.System()
		dir := t.TempDir()
		out := runtime.NewChangelogTable()
		run, err := runtime.Start(sys, wordCount(out), runtime.Options{Parallelism: 2, Dir: dir, Backend: be})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		if err := run.Kill(); err != nil {
			t.Fatal(err)
		}
		run, err = runtime.Start(sys, wordCount(out), runtime.Options{Parallelism: 1, Dir: dir, Backend: be, RestoreLatest: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Wait(); err != nil {
			t.Fatal(err)
		}
		rows, err := out.Rows()
		if err != nil {
			t.Fatal(err)
		}
		return sim.TraceHash(), len(rows)
	}
	for _, seed := range []uint64{1, 2} {
		h1, n1 := trace(seed)
		h2, n2 := trace(seed)
		if h1 != h2 || n1 != 3 || n2 != 3 {
			t.Fatalf("%s, seed %d: traces %x, %x; rows %d, %d (want 3)", backend, seed, h1, h2, n1, n2)
		}
	}
}
