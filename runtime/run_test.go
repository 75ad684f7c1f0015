package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// failingOp fails on the first batch.
type failingOp struct{}

func (failingOp) Open(*runtime.OperatorContext) error { return nil }
func (failingOp) Process(int, []runtime.Record, runtime.Emitter) error {
	return errors.New("operator broke")
}

// An operator's error ends the run: Wait reports it instead of hanging.
func TestOperatorErrorFailsRun(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	schema := runtime.Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	src := &runtime.RowsSource{Schema: schema, Rows: [][]runtime.Row{{{subtask.Int(1)}}}}
	g := runtime.NewGraph()
	in := g.Source("in", src)[0]
	out := runtime.Apply("broken", []runtime.Stream{in}, [][]int{{0}}, schema, func() runtime.Operator { return failingOp{} })
	out.Sink("out", runtime.NewChangelogTable())
	run, err := runtime.Start(sys, g, runtime.Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err == nil || !strings.Contains(err.Error(), "operator broke") {
		t.Fatalf("Wait = %v, want the operator's error", err)
	}
}

// A graph whose stream ends nowhere does not start.
func TestGraphWithoutSink(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	g := runtime.NewGraph()
	g.Source("in", &runtime.RowsSource{Schema: runtime.Schema{{Name: "k", Type: table.BigInt()}}, Rows: [][]runtime.Row{nil}})
	if _, err := runtime.Start(sys, g, runtime.Options{}); err == nil {
		t.Fatal("graph without a sink started")
	}
}
