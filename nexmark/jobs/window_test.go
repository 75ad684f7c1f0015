package jobs_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

// windowEvents events at 250 events/s span 40 s of event time, so that
// many windows fire while a run goes on.
const windowEvents = 10_000

func windowConfig() nexmark.Config {
	cfg := testConfig()
	cfg.NumEvents = windowEvents
	cfg.EventsPerSecond = 250
	return cfg
}

// windowScenarios are the memory backend's: each parallelism, and a
// restore at the other one both ways (a restore at the same parallelism
// adopts state whole, as the main query matrix checks).
var windowScenarios = []scenario{
	{parallelism: 1},
	{parallelism: 2},
	{parallelism: 2, restoreAt: 1},
	{parallelism: 1, restoreAt: 2},
}

// The window queries equal the reference on every backend, at parallelism
// 1 and 2, and through a kill after a checkpoint (taken once windows have
// fired) and a restore at the same or another parallelism.
func TestWindowQueriesMatchReference(t *testing.T) {
	events, err := nexmark.AllEvents(windowConfig(), testSplits)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range jobs.WindowQueries() {
		ref, ok := nexmark.LookupQuery(q.Name)
		if !ok {
			t.Fatalf("no reference for %s", q.Name)
		}
		want := ref.Reference(events)
		if want.Len() < 3 {
			t.Fatalf("%s: the reference has %d rows; the input spans too few windows", q.Name, want.Len())
		}
		for bname, backend := range backends {
			// A disk backend runs one rescaling restore; the operators are
			// the same on every backend.
			matrix := []scenario{{parallelism: 2, restoreAt: 1}}
			if bname == "memory" {
				matrix = windowScenarios
			}
			for _, sc := range matrix {
				sc.backend = backend
				t.Run(fmt.Sprintf("%s/%s/%s", q.Name, bname, sc), func(t *testing.T) {
					sys := actors.NewSystem(actors.Options{})
					defer sys.Close()
					if d := nexmark.Diff(want, runWindowScenario(t, sys, q, sc)); d != "" {
						t.Fatalf("output differs from the reference: %s", d)
					}
				})
			}
		}
	}
}

// runWindowScenario runs q over windowConfig as sc says: to the end, or
// killed at 70% of the input after checkpoints at 60% and on the way
// to 70%, and restored.
func runWindowScenario(t *testing.T, sys *actors.System, q jobs.Query, sc scenario) nexmark.Output {
	t.Helper()
	table := runtime.NewChangelogTable()
	src := &gatedSource{Source: &jobs.Source{Config: windowConfig(), NumSplits: testSplits}}
	g := runtime.NewGraph()
	q.Build(g.Source("nexmark", src)).Sink("sink", table)
	opts := runtime.Options{Name: q.Name, Parallelism: sc.parallelism, Backend: sc.backend(), Dir: t.TempDir(),
		BatchSize: 256, Wait: 2 * time.Minute}
	if sc.restoreAt == 0 {
		src.limit.Store(math.MaxInt64)
		run, err := runtime.Start(sys, g, opts)
		if err != nil {
			t.Fatal(err)
		}
		must(t, "run", run.Wait())
		return output(t, q, table)
	}
	perSplit := int64(windowEvents / testSplits)
	src.limit.Store(perSplit * 6 / 10)
	run, err := runtime.Start(sys, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, "sources idle at 60%", run.AwaitSourcesIdle())
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	src.limit.Store(perSplit * 7 / 10)
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	must(t, "sources idle at 70%", run.AwaitSourcesIdle())
	must(t, "kill", run.Kill())
	if table.Stats().Changes == 0 {
		t.Fatal("the first run committed nothing before it was killed")
	}
	src.limit.Store(math.MaxInt64)
	opts.Parallelism, opts.RestoreLatest = sc.restoreAt, true
	if run, err = runtime.Start(sys, g, opts); err != nil {
		t.Fatal(err)
	}
	must(t, "restored run", run.Wait())
	return output(t, q, table)
}
