package runtime_test

import (
	"strings"
	"testing"

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
