package runtime

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// dirGoneRun starts a simulated paimon run of a keyed count whose source
// reads half its rows, completes a checkpoint, removes what remove names
// (a path under the run's directory), and lets the source read the rest.
func dirGoneRun(t *testing.T, remove func(dir string) string) (*Run, error) {
	t.Helper()
	var rows []Row
	for i := range 200 {
		rows = append(rows, Row{subtask.Int(int64(i))})
	}
	src := &heldSource{RowsSource: RowsSource{Schema: Schema{{Name: "k", Type: table.BigInt().NotNull()}}, Rows: [][]Row{rows}}}
	src.limit.Store(100)
	g := NewGraph()
	in := g.Source("in", src)[0]
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", NewChangelogTable())
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 3}, MaxSteps: 1_000_000})
	dir := t.TempDir()
	run, err := Start(sim.System(), g, Options{Dir: dir, BatchSize: 10,
		Backend: PaimonBackend(subtask.PaimonOptions{}, compaction.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Checkpoint(); err != nil {
		t.Fatalf("checkpoint before the removal: %v", err)
	}
	if err := os.RemoveAll(remove(dir)); err != nil {
		t.Fatal(err)
	}
	src.limit.Store(int64(len(rows)))
	// A minute of virtual time is thousands of retries of the final
	// checkpoint (one per 10 ms poll): the run must have ended by then.
	if err := sim.RunFor(time.Minute); err != nil {
		t.Fatal(err)
	}
	for run.probe.Len() > 0 {
		if _, err := run.next(); err != nil {
			t.Fatal(err)
		}
	}
	if run.err == nil && !run.finished {
		st := run.Stats()
		t.Fatalf("the run neither failed nor finished in a minute: %d checkpoints completed, %d aborted", st.Completed, st.Aborted)
	}
	return run, run.Wait()
}

// A run whose local state directory is removed under it fails, naming a
// file it could not write, rather than retrying its failing checkpoints for
// ever (the stores keep every row in memory meanwhile).
func TestRunFailsWhenItsStateDirectoryIsRemoved(t *testing.T) {
	run, err := dirGoneRun(t, func(dir string) string { return dir + "/job/local" })
	defer run.Kill()
	if err == nil {
		t.Fatal("the run finished without its state directory")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/job/local/") {
		t.Fatalf("run failed with %v; want a missing file of the state directory", err)
	}
	if st := run.Stats(); st.Aborted < DefaultCheckpointFailures || st.Completed != 1 {
		t.Fatalf("%d checkpoints completed, %d aborted: want the one before the removal completed and the failures retried", st.Completed, st.Aborted)
	}
}

// The same with the checkpoint directory removed: the uploads fail.
func TestRunFailsWhenItsCheckpointDirectoryIsRemoved(t *testing.T) {
	run, err := dirGoneRun(t, func(dir string) string { return dir + "/job/checkpoints" })
	defer run.Kill()
	if err == nil {
		t.Fatal("the run finished without its checkpoint directory")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/job/checkpoints") {
		t.Fatalf("run failed with %v; want a missing file of the checkpoint directory", err)
	}
}
