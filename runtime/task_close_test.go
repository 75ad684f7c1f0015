package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// brokenOp fails on its first batch.
type brokenOp struct{}

func (brokenOp) Open(*OperatorContext) error { return nil }
func (brokenOp) Process(int, []Record, Emitter) error {
	return errors.New("operator broke")
}

// A task that failed still closes its store when the run stops: it ignores
// every other message, but its store's files, memory and databases stay
// open until closed. No checkpoint runs (no interval, and the input never
// ends at the sinks), so no Store actor job holds a store open past its
// task's stop: each fence is done once the run's actors are gone.
func TestFailedTaskClosesItsStore(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	src := &RowsSource{Schema: schema, Rows: [][]Row{{{subtask.Int(1)}, {subtask.Int(2)}, {subtask.Int(3)}}}}
	g := NewGraph()
	in := g.Source("in", src)[0]
	out := Apply("broken", []Stream{in}, [][]int{{0}}, schema, func() Operator { return brokenOp{} })
	out.Sink("out", NewChangelogTable())
	run, err := Start(sys, g, Options{Parallelism: 2, Backend: PebbleBackend(subtask.PebbleOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	starts := run.env.starts
	if err := run.Wait(); err == nil || !strings.Contains(err.Error(), "operator broke") {
		t.Fatalf("Wait = %v, want the operator's error", err)
	}
	stores := 0
	for i, st := range starts {
		if st.backend == nil {
			continue
		}
		stores++
		select {
		case <-st.fence.Done():
			if err := st.fence.Err(); err != nil {
				t.Fatalf("task %s: closing its store: %v", run.env.plan.tasks[i].id, err)
			}
		default:
			t.Fatalf("task %s: its store is still open after the run stopped", run.env.plan.tasks[i].id)
		}
	}
	if stores == 0 {
		t.Fatal("no task has a store")
	}
}
