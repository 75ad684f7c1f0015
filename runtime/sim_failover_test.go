package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// failoverGraph counts keys read from three splits. With crashAfter > 0 the
// source task that maps the crashAfter-th row panics.
func failoverGraph(rows [][]Row, out Committer, crashAfter int64) *Graph {
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	g := NewGraph()
	in := g.Source("in", &RowsSource{Schema: schema, Rows: rows})[0]
	if crashAfter > 0 {
		left := crashAfter
		in = in.Map(schema, func(r Row) Row {
			// Source tasks map on their own actors: left is shared by
			// them, which only a simulation's single goroutine allows.
			if left--; left == 0 {
				panic("injected crash of a source task")
			}
			return r
		})
	}
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", out)
	return g
}

// A job killed at the seed's points of a simulation (some of its runs
// failed already: a source task panicked, and was stopped or restarted by
// its supervisor) and restored from its latest checkpoint at another
// parallelism, again and again, ends with exactly the output of a run
// without failures.
func TestSimulatedFailovers(t *testing.T) {
	// LAKESTATE_FAILOVER_SEEDS=N (and LAKESTATE_FAILOVER_FIRST=S) sweeps
	// more seeds.
	seeds, first := 8, 1
	if n, err := strconv.Atoi(os.Getenv("LAKESTATE_FAILOVER_SEEDS")); err == nil {
		seeds = n
	}
	if n, err := strconv.Atoi(os.Getenv("LAKESTATE_FAILOVER_FIRST")); err == nil {
		first = n
	}
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			for seed := uint64(first); seed < uint64(first+seeds); seed++ {
				if err := failovers(t, seed, backend); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		})
	}
}

func failovers(t *testing.T, seed uint64, backend string) error {
	rng := rand.New(rand.NewPCG(seed, 0xfa11))
	rows := make([][]Row, 3)
	want := map[int64]int64{}
	for i := range 150 + rng.IntN(150) {
		k := int64(rng.IntN(12))
		rows[i%3] = append(rows[i%3], Row{subtask.Int(k)})
		want[k]++
	}
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed, MaxRestarts: rng.IntN(2)}})
	sys := sim.System()
	be, err := OpenBackend(backend)
	if err != nil {
		return err
	}
	out := NewChangelogTable()
	dir := t.TempDir()
	var trace []string
	for kills := 1 + rng.IntN(4); ; kills-- {
		opts := Options{Name: "fo", Dir: dir, Backend: be, Parallelism: 1 + rng.IntN(3), BatchSize: 1 + rng.IntN(8),
			CheckpointInterval: time.Duration(1+rng.IntN(20)) * time.Millisecond, OverlapCheckpoints: rng.IntN(2) == 0,
			RestoreLatest: true}
		crashAfter := int64(0)
		if kills > 0 && rng.IntN(3) == 0 {
			crashAfter = 1 + rng.Int64N(200)
		}
		run, err := Start(sys, failoverGraph(rows, out, crashAfter), opts)
		if errors.Is(err, errNoCheckpoint) {
			opts.RestoreLatest = false
			run, err = Start(sys, failoverGraph(rows, out, crashAfter), opts)
		}
		if err != nil && crashAfter > 0 {
			trace = append(trace, fmt.Sprintf("start p%d failed: %v", opts.Parallelism, err))
			continue // the crash came before the start returned
		}
		if err != nil {
			return fmt.Errorf("%v: start p=%d: %w", trace, opts.Parallelism, err)
		}
		trace = append(trace, fmt.Sprintf("p%d from %d crash after %d", opts.Parallelism, run.Restored(), crashAfter))
		if kills == 0 {
			if err := run.Wait(); err != nil {
				return fmt.Errorf("%v: %w", trace, err)
			}
			break
		}
		steps := rng.IntN(4000)
		if _, err := sim.Run(steps); err != nil {
			return fmt.Errorf("%v: %w", trace, err)
		}
		trace = append(trace, fmt.Sprintf("kill after %d steps", steps))
		if err := run.Kill(); err != nil {
			return fmt.Errorf("%v: %w", trace, err)
		}
	}
	got, err := out.Rows()
	if err != nil {
		return fmt.Errorf("%v: %w", trace, err)
	}
	have := map[int64]int64{}
	for _, r := range got {
		have[r[0].Int()] += r[1].Int()
	}
	keys := slices.Sorted(func(yield func(int64) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})
	if len(got) != len(want) {
		return fmt.Errorf("%v: %d rows, want %d", trace, len(got), len(want))
	}
	for _, k := range keys {
		if have[k] != want[k] {
			return fmt.Errorf("%v: key %d counted %d, want %d", trace, k, have[k], want[k])
		}
	}
	return nil
}

// On the real system, a job killed right after a checkpoint completed
// (others in flight, overlapping, every millisecond: a paimon store's
// commit or a maintenance job may be running) and restored at another
// parallelism, twice, ends with exactly the output of a run without
// failures, on every backend.
func TestRealFailovers(t *testing.T) {
	for _, backend := range BackendNames() {
		t.Run(backend, func(t *testing.T) {
			be, err := OpenBackend(backend)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 0xfa11))
			rows := make([][]Row, 3)
			want := map[int64]int64{}
			for i := range 3000 {
				k := int64(rng.IntN(50))
				rows[i%3] = append(rows[i%3], Row{subtask.Int(k)})
				want[k]++
			}
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			out := NewChangelogTable()
			dir := t.TempDir()
			for i, p := range []int{2, 1, 3} {
				opts := Options{Name: "fo", Dir: dir, Backend: be, Parallelism: p, BatchSize: 16,
					CheckpointInterval: time.Millisecond, OverlapCheckpoints: true, RestoreLatest: i > 0}
				run, err := Start(sys, failoverGraph(rows, out, 0), opts)
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if i == 2 {
					if err := run.Wait(); err != nil {
						t.Fatalf("run %d: %v", i, err)
					}
					break
				}
				// Aborted (overlapping checkpoints subsume) or ended: the
				// kill comes all the same.
				_, _ = run.Checkpoint()
				if err := run.Kill(); err != nil {
					t.Fatalf("run %d: kill: %v", i, err)
				}
			}
			got, err := out.Rows()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for _, r := range got {
				if k, n := r[0].Int(), r[1].Int(); n != want[k] {
					t.Fatalf("key %d counted %d, want %d", k, n, want[k])
				}
			}
		})
	}
}
