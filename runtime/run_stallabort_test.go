package runtime

import (
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// While a store's maintenance is behind the sources hold and only
// checkpoints give it rounds to catch up; one aborted then is asked for
// again after a pause (there is no periodic trigger here), so a run whose
// checkpoints keep failing while stalled fails instead of idling for ever.
func TestStalledRunRetriesAbortedCheckpoints(t *testing.T) {
	var rows []Row
	for i := range 20 {
		rows = append(rows, Row{subtask.Int(int64(i))})
	}
	src := &heldSource{RowsSource: RowsSource{Schema: Schema{{Name: "k", Type: table.BigInt().NotNull()}}, Rows: [][]Row{rows}}}
	g := NewGraph()
	in := g.Source("in", src)[0]
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", NewChangelogTable())
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 5}, MaxSteps: 1_000_000})
	// The counted backend's stores decline every checkpoint.
	run, err := Start(sim.System(), g, Options{Backend: &countedBackend{}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Kill()
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	sim.System().Send(run.job, &compaction.BackpressureChanged{Backpressure: compaction.Backpressure{Stalled: true}})
	if err := sim.RunFor(time.Minute); err != nil {
		t.Fatal(err)
	}
	for run.probe.Len() > 0 {
		if _, err := run.next(); err != nil {
			t.Fatal(err)
		}
	}
	if st := run.Stats(); run.err == nil || st.Aborted <= DefaultCheckpointFailures {
		t.Fatalf("run error %v after %d aborted checkpoints; want it failed after %d", run.err, st.Aborted, DefaultCheckpointFailures+1)
	}
}
