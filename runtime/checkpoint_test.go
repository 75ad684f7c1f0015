package runtime_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// wordCount is a keyed job over a few words.
func wordCount(out runtime.Committer) *runtime.Graph {
	word := func(w string) runtime.Row { return runtime.Row{subtask.Str(w)} }
	src := &runtime.RowsSource{
		Schema: runtime.Schema{{Name: "word", Type: table.String().NotNull()}},
		Rows:   [][]runtime.Row{{word("a"), word("b"), word("a")}, {word("c"), word("a")}},
	}
	g := runtime.NewGraph()
	words := g.Source("words", src)[0]
	runtime.Aggregate("count", words, []int{0}, runtime.Count("n")).Sink("out", out)
	return g
}

// Checkpoint ids continue across runs of a job over one checkpoint
// directory, and a run restored from a finished run's final checkpoint
// (adopting each subtask's state whole: same parallelism) adds no output. A checkpoint restores only onto the
// backend that wrote it.
func TestRunsShareCheckpoints(t *testing.T) {
	for _, name := range runtime.BackendNames() {
		t.Run(name, func(t *testing.T) {
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			be, err := runtime.OpenBackend(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			opts := runtime.Options{Parallelism: 2, Backend: be, Dir: dir}
			out := runtime.NewChangelogTable()
			first, err := runtime.Start(sys, wordCount(out), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Wait(); err != nil {
				t.Fatal(err)
			}
			if first.Completed() == 0 || first.Stats().Completed == 0 || first.Stats().UploadedBytes == 0 {
				t.Fatalf("first run: completed %d, stats %+v", first.Completed(), first.Stats())
			}
			if len(first.Stats().Syncs) == 0 {
				t.Fatal("no sync phases reported")
			}

			opts.RestoreLatest = true
			second, err := runtime.Start(sys, wordCount(out), opts)
			if err != nil {
				t.Fatal(err)
			}
			if second.Restored() != first.Completed() {
				t.Fatalf("restored %d, want the first run's last checkpoint %d", second.Restored(), first.Completed())
			}
			if err := second.Wait(); err != nil {
				t.Fatal(err)
			}
			if second.Completed() <= first.Completed() {
				t.Fatalf("second run completed checkpoint %d, not after the first run's %d", second.Completed(), first.Completed())
			}
			rows, err := out.Rows()
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rows); got != 3 {
				t.Fatalf("rows %v, want a, b, c counted once", rows)
			}

			other := "memory"
			if name == "memory" {
				other = "pebble"
			}
			opts.Backend, _ = runtime.OpenBackend(other)
			if _, err := runtime.Start(sys, wordCount(out), opts); err == nil || !strings.Contains(err.Error(), "between backends") {
				t.Fatalf("restore onto the %s backend: %v, want a refusal", other, err)
			}
		})
	}
}

// With OverlapCheckpoints the next checkpoint starts once every task ended
// the sync phase of the one in flight (a paimon store's barrier then waits
// for the previous commit and maintenance round): on every backend, a run
// with checkpoints as often as they may go counts every word exactly, and a
// run restored from its last checkpoint adds nothing. (How many checkpoints
// overlap depends on the machine; TestTriggersOverlap covers the rule.)
func TestOverlappingCheckpoints(t *testing.T) {
	const words, perSplit = 20, 3000
	var splits [][]runtime.Row
	for s := range 2 {
		var rows []runtime.Row
		for i := range perSplit {
			rows = append(rows, runtime.Row{subtask.Str(fmt.Sprintf("w%02d", (i*7+s)%words))})
		}
		splits = append(splits, rows)
	}
	graph := func(out runtime.Committer) *runtime.Graph {
		g := runtime.NewGraph()
		src := g.Source("words", &pacedSource{RowsSource: runtime.RowsSource{Schema: runtime.Schema{{Name: "word", Type: table.String().NotNull()}}, Rows: splits}})[0]
		runtime.Aggregate("count", src, []int{0}, runtime.Count("n")).Sink("out", out)
		return g
	}
	for _, name := range runtime.BackendNames() {
		t.Run(name, func(t *testing.T) {
			be, err := runtime.OpenBackend(name)
			if err != nil {
				t.Fatal(err)
			}
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			out := runtime.NewChangelogTable()
			opts := runtime.Options{Parallelism: 2, Dir: t.TempDir(), Backend: be, BatchSize: 16, IdlePoll: time.Millisecond,
				CheckpointInterval: time.Millisecond, OverlapCheckpoints: true}
			run, err := runtime.Start(sys, graph(out), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Wait(); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				rows, err := out.Rows()
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != words {
					t.Fatalf("%s: %d words counted, want %d", when, len(rows), words)
				}
				for _, r := range rows {
					if n := r[1].Int(); n != 2*perSplit/words {
						t.Fatalf("%s: %v counted %d times, want %d", when, r[0], n, 2*perSplit/words)
					}
				}
			}
			check("after the run")
			opts.RestoreLatest = true
			again, err := runtime.Start(sys, graph(out), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := again.Wait(); err != nil {
				t.Fatal(err)
			}
			check("after the restored run")
		})
	}
}

// pacedSource is a RowsSource whose readers have nothing every other poll,
// so that checkpoint timers fire between batches.
type pacedSource struct{ runtime.RowsSource }

func (s *pacedSource) Open(split int, offset int64, outputs []runtime.OutputUse) (runtime.SplitReader, error) {
	r, err := s.RowsSource.Open(split, offset, outputs)
	return &pacedReader{SplitReader: r}, err
}

type pacedReader struct {
	runtime.SplitReader
	idle bool
}

func (r *pacedReader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	if r.idle = !r.idle; r.idle {
		return runtime.ReadIdle, nil
	}
	return r.SplitReader.Read(n, emit)
}
