package runtime_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// keeperOp holds every row it receives next to a copy taken on arrival and
// appends to each row (which must not reach any other row); once its input
// ends it checks that no held row changed. Rows handed downstream are
// immutable, so a runtime that built a later row in the storage of an
// earlier one fails here.
type keeperOp struct {
	kept, copies []runtime.Row
}

func (k *keeperOp) Open(*runtime.OperatorContext) error { return nil }

func (k *keeperOp) Process(_ int, recs []runtime.Record, out runtime.Emitter) error {
	for _, r := range recs {
		k.kept = append(k.kept, r.Row)
		k.copies = append(k.copies, slices.Clone(r.Row))
		_ = append(r.Row, subtask.Str("appended"))
		out.Emit(r.Kind, r.Row)
	}
	return nil
}

func (k *keeperOp) EndOfInput(runtime.Emitter) error {
	for i, r := range k.kept {
		if !r.Equal(k.copies[i]) {
			return fmt.Errorf("row %d changed after it was emitted: %v, was %v", i, r, k.copies[i])
		}
	}
	return nil
}

// Rows that the runtime builds (projections, join output, join state) are
// never written again once handed on, on every backend: an updating left
// side (retractions delete join entries) stored whole, a right side keyed by
// columns that are not consecutive, small batches so that rows of many
// batches are alive at once.
func TestEmittedRowsAreNeverReused(t *testing.T) {
	for _, backend := range runtime.BackendNames() {
		t.Run(backend, func(t *testing.T) {
			be, err := runtime.OpenBackend(backend)
			if err != nil {
				t.Fatal(err)
			}
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			bigint, str := table.BigInt().NotNull(), table.String().NotNull()
			var left, right []runtime.Row
			counts := map[[2]any]int64{}
			for i := range 1500 {
				k, w := int64(i%37), fmt.Sprintf("w%d", i%5)
				left = append(left, runtime.Row{subtask.Str(w), subtask.Int(k), subtask.Int(int64(i))})
				counts[[2]any{k, w}]++
			}
			for i := range 300 {
				right = append(right, runtime.Row{subtask.Int(int64(i)), subtask.Int(int64(i % 41)), subtask.Str(fmt.Sprintf("t%d", i%3))})
			}
			sources := slices.Concat(left, right)
			sourceCopies := make([]runtime.Row, len(sources))
			for i, r := range sources {
				sourceCopies[i] = slices.Clone(r)
			}

			g := runtime.NewGraph()
			l := g.Source("left", &runtime.RowsSource{
				Schema: runtime.Schema{{Name: "w", Type: str}, {Name: "k", Type: bigint}, {Name: "i", Type: bigint}},
				Rows:   [][]runtime.Row{left[:700], left[700:]},
			})[0]
			r := g.Source("right", &runtime.RowsSource{
				Schema: runtime.Schema{{Name: "id", Type: bigint}, {Name: "k", Type: bigint}, {Name: "tag", Type: str}},
				Rows:   [][]runtime.Row{right},
			})[0]
			// [k, w, n], updated as counts grow
			lc := runtime.Aggregate("count", l.Project(1, 0), []int{0, 1}, runtime.Count("n"))
			// [tag, k, id], keyed by (id, tag)
			joined := runtime.Join("join", lc, r.Project(2, 1, 0), runtime.JoinSpec{
				Left:  runtime.JoinInput{Key: []int{0}},
				Right: runtime.JoinInput{Key: []int{1}, Unique: []int{2, 0}},
			})
			schema := runtime.Schema{{Name: "k", Type: bigint}, {Name: "w", Type: str}, {Name: "n", Type: bigint},
				{Name: "tag", Type: str}, {Name: "k2", Type: bigint}, {Name: "id", Type: bigint}}
			kept := runtime.Apply("keep", []runtime.Stream{joined}, [][]int{{0}}, schema,
				func() runtime.Operator { return &keeperOp{} })
			out := runtime.NewChangelogTable()
			kept.Sink("out", out)

			run, err := runtime.Start(sys, g, runtime.Options{Name: "reuse", Parallelism: 2, BatchSize: 7, Backend: be, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			if err := run.Wait(); err != nil {
				t.Fatal(err)
			}
			for i, r := range sources {
				if !r.Equal(sourceCopies[i]) {
					t.Fatalf("source row %d changed: %v, was %v", i, r, sourceCopies[i])
				}
			}

			var want []string
			for kw, n := range counts {
				for _, rr := range right {
					if rr[1].Int() == kw[0].(int64) {
						want = append(want, fmt.Sprint(kw[0], kw[1], n, rr[2].Str(), rr[1].Int(), rr[0].Int()))
					}
				}
			}
			rows, err := out.Rows()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, fmt.Sprint(r[0].Int(), r[1].Str(), r[2].Int(), r[3].Str(), r[4].Int(), r[5].Int()))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("join output: %d rows, want %d", len(got), len(want))
			}
		})
	}
}
