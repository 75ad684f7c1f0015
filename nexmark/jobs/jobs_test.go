package jobs_test

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
)

const (
	testEvents = 20_000
	testSplits = 2
)

func testConfig() nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = testEvents
	cfg.BaseTime = nexmark.DefaultBaseTime
	return cfg
}

var references = map[string]nexmark.Output{}

// reference is the reference implementation's output on the test events.
func reference(t *testing.T, name string) nexmark.Output {
	t.Helper()
	if out, ok := references[name]; ok {
		return out
	}
	events, err := nexmark.AllEvents(testConfig(), testSplits)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := nexmark.LookupQuery(name)
	if !ok {
		t.Fatalf("no reference for %s", name)
	}
	references[name] = q.Reference(events)
	return references[name]
}

// scenario is how a query is run: at a parallelism, and optionally killed
// after a checkpoint and restored at another.
type scenario struct {
	parallelism int
	// restoreAt, if positive, is the parallelism of a second run restored
	// from the last checkpoint the first one completed before it was killed.
	restoreAt int
	backend   func() runtime.StateBackend
}

func (s scenario) String() string {
	if s.restoreAt == 0 {
		return fmt.Sprintf("p%d", s.parallelism)
	}
	return fmt.Sprintf("p%d-restore-p%d", s.parallelism, s.restoreAt)
}

// scenarios is the full matrix, run on the memory backend; the disk
// backends run the cheaper subset that still covers a restore at the same
// and at a different parallelism both ways.
var scenarios = []scenario{
	{parallelism: 1},
	{parallelism: 2},
	{parallelism: 1, restoreAt: 1},
	{parallelism: 2, restoreAt: 2},
	{parallelism: 2, restoreAt: 1},
	{parallelism: 1, restoreAt: 2},
}

var diskScenarios = diskMatrix(os.Getenv("LAKESTATE_JOBS_FULL") != "")

// diskMatrix is what the disk backends run: a restore at a different
// parallelism both ways (merging two subtasks' state, splitting one's), and
// with full also at the same one (the aligned adoption, which
// runtime's own tests cover on every backend).
func diskMatrix(full bool) []scenario {
	m := []scenario{{parallelism: 2, restoreAt: 1}, {parallelism: 1, restoreAt: 2}}
	if full {
		m = append(m, scenario{parallelism: 2, restoreAt: 2})
	}
	return m
}

var backends = map[string]func() runtime.StateBackend{
	"memory": runtime.MemoryBackend,
	"pebble": func() runtime.StateBackend {
		return runtime.PebbleBackend(subtask.PebbleOptions{MemTableSize: 4 << 20})
	},
	"paimon": func() runtime.StateBackend {
		return runtime.PaimonBackend(subtask.PaimonOptions{}, compaction.Config{})
	},
}

// Every query's committed output equals the reference, on every backend, at
// parallelism 1 and 2, and through a kill and a restore from the last
// completed checkpoint at the same or another parallelism.
func TestQueriesMatchReference(t *testing.T) {
	for _, q := range jobs.Queries() {
		for bname, backend := range backends {
			matrix := diskScenarios
			if bname == "memory" {
				matrix = scenarios
			}
			for _, sc := range matrix {
				sc.backend = backend
				t.Run(fmt.Sprintf("%s/%s/%s", q.Name, bname, sc), func(t *testing.T) {
					sys := actors.NewSystem(actors.Options{})
					defer sys.Close()
					got := runScenario(t, sys, q, sc)
					if d := nexmark.Diff(reference(t, q.Name), got); d != "" {
						t.Fatalf("output differs from the reference: %s", d)
					}
				})
			}
		}
	}
}

// runScenario runs q as sc says and returns its committed output.
func runScenario(t *testing.T, sys *actors.System, q jobs.Query, sc scenario) nexmark.Output {
	t.Helper()
	table := runtime.NewChangelogTable()
	src := &gatedSource{Source: &jobs.Source{Config: testConfig(), NumSplits: testSplits}}
	g := runtime.NewGraph()
	q.Build(g.Source("nexmark", src)).Sink("sink", table)
	opts := runtime.Options{
		Name:        q.Name,
		Parallelism: sc.parallelism,
		Backend:     sc.backend(),
		Dir:         t.TempDir(),
		Blobs:       newMemBlobs(),
		BatchSize:   256,
		Wait:        2 * time.Minute,
	}
	perSplit := int64(testEvents / testSplits)
	if sc.restoreAt == 0 {
		src.limit.Store(math.MaxInt64)
		run, err := runtime.Start(sys, g, opts)
		if err != nil {
			t.Fatal(err)
		}
		must(t, "run", run.Wait())
		return output(t, q, table)
	}

	// First run: checkpoint with the sources held at 40% of the input, then
	// a checkpoint taken while the input moves on to 70%, where the run dies.
	src.limit.Store(perSplit * 4 / 10)
	run, err := runtime.Start(sys, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, "sources idle at 40%", run.AwaitSourcesIdle())
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	src.limit.Store(perSplit * 7 / 10)
	last, err := run.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	must(t, "sources idle at 70%", run.AwaitSourcesIdle())
	must(t, "kill", run.Kill())
	committedBefore := table.Stats().Changes

	src.limit.Store(math.MaxInt64)
	opts.Parallelism, opts.RestoreLatest = sc.restoreAt, true
	run, err = runtime.Start(sys, g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if run.Restored() != last {
		t.Fatalf("restored checkpoint %d, want the last completed one, %d", run.Restored(), last)
	}
	must(t, "restored run", run.Wait())
	if committedBefore == 0 {
		t.Fatal("the first run committed nothing before it was killed")
	}
	return output(t, q, table)
}

func output(t *testing.T, q jobs.Query, table *runtime.ChangelogTable) nexmark.Output {
	t.Helper()
	rows, err := table.Rows()
	if err != nil {
		t.Fatal(err)
	}
	return q.Output(rows)
}

func must(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}
