package barrier

import (
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/table"
)

// The store's verdict is stalled while any of its tables is; the caller
// hears only its flips.
func TestStoreBackpressureAggregatesTables(t *testing.T) {
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 1}})
	sys := sim.System()
	defer sys.Close()
	bp, err := actors.NewProbe(sys, "bp")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := NewHistory("b1")
	pid, err := sys.Spawn("store", NewStoreActor(sys, StoreConfig{WorkDir: t.TempDir(), FileIO: table.NewLocalFileIO(), History: h, Backpressure: bp.PID()}))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		table   string
		stalled bool
		runs    int
		flip    bool // the store's verdict flips to stalled
	}{
		{"a", true, 6, true},
		{"b", true, 9, false},
		{"a", false, 2, false},
		{"b", false, 3, true},
		{"b", true, 7, true},
	} {
		sys.Send(pid, &tableBackpressure{table: step.table, b: compaction.Backpressure{Stalled: step.stalled, SortedRuns: step.runs}})
		if err := sim.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		msgs := bp.Drain()
		if !step.flip {
			if len(msgs) != 0 {
				t.Fatalf("%+v: verdict sent without a flip: %v", step, msgs)
			}
			continue
		}
		if len(msgs) != 1 {
			t.Fatalf("%+v: %d messages, want one", step, len(msgs))
		}
		m := msgs[0].(*compaction.BackpressureChanged)
		if m.Backpressure.Stalled != step.stalled {
			t.Fatalf("%+v: verdict %+v", step, m.Backpressure)
		}
		if step.stalled && m.Backpressure.SortedRuns != step.runs {
			t.Fatalf("%+v: sorted runs %d", step, m.Backpressure.SortedRuns)
		}
	}
}
