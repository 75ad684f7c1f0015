package runtime

import (
	"sync/atomic"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// heldSource reads its one split's rows up to a limit the test moves.
type heldSource struct {
	RowsSource
	limit, read atomic.Int64
}

func (s *heldSource) Open(split int, offset int64, wanted []OutputUse) (SplitReader, error) {
	r, err := s.RowsSource.Open(split, offset, wanted)
	return &heldReader{SplitReader: r, src: s}, err
}

type heldReader struct {
	SplitReader
	src *heldSource
}

func (r *heldReader) Read(n int, emit func(int, Row)) (ReadStatus, error) {
	left := r.src.limit.Load() - r.Offset()
	if left <= 0 {
		return ReadIdle, nil
	}
	before := r.Offset()
	st, err := r.SplitReader.Read(int(min(int64(n), left)), emit)
	r.src.read.Add(r.Offset() - before)
	return st, err
}

// While a store reports its maintenance behind, the sources read nothing
// (checkpoints still complete); once it catches up they go on, and the
// output is whole.
func TestBackpressureHoldsSources(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	var rows []Row
	for i := range 100 {
		rows = append(rows, Row{subtask.Int(int64(i % 7))})
	}
	src := &heldSource{RowsSource: RowsSource{Schema: Schema{{Name: "k", Type: table.BigInt().NotNull()}}, Rows: [][]Row{rows}}}
	g := NewGraph()
	in := g.Source("in", src)[0]
	out := NewChangelogTable()
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", out)
	run, err := Start(sys, g, Options{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	stall := func(stalled bool) {
		t.Helper()
		sys.Send(run.job, &compaction.BackpressureChanged{Backpressure: compaction.Backpressure{Stalled: stalled}})
		if err := run.await(func(msg any) bool { m, ok := msg.(*evBackpressure); return ok && m.stalled == stalled }); err != nil {
			t.Fatal(err)
		}
	}
	stall(true)
	// The hold reached the source before this checkpoint's barrier did.
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	src.limit.Store(int64(len(rows)))
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := src.read.Load(); n != 0 {
		t.Fatalf("held source read %d rows", n)
	}
	stall(false)
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := src.read.Load(); n != int64(len(rows)) {
		t.Fatalf("source read %d rows, want %d", n, len(rows))
	}
	got, err := out.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || run.Stats().Stalls != 1 {
		t.Fatalf("rows %v, stalls %d; want 7 keys and one stall", got, run.Stats().Stalls)
	}
}
