package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakestate/lakestate/barrier"
)

// envInt reads a positive integer knob of long sweeps from the environment.
func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return def
}

func failure(cfg Config, r Result) string {
	return fmt.Sprintf("seed %d failed at step %d: %v\nreplay: go run ./cmd/lakestate sim --seed %d --steps %d\n%s",
		r.Seed, r.Step, r.Err, r.Seed, cfg.Steps, strings.Join(r.Trace, "\n"))
}

// ciSteps is the faulty phase of the CI sweep's seeds.
const ciSteps = 5000

// TestSeeds runs the workload over 200 seeds with every fault kind, two
// seeds at a time. LAKESTATE_SIM_SEEDS, LAKESTATE_SIM_FIRST and
// LAKESTATE_SIM_STEPS widen the sweep.
func TestSeeds(t *testing.T) {
	n, first := envInt("LAKESTATE_SIM_SEEDS", 200), envInt("LAKESTATE_SIM_FIRST", 1)
	steps := envInt("LAKESTATE_SIM_STEPS", ciSteps)
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var total uint64
	faults, backends := map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for range min(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for seed := range seeds {
				cfg := Config{Seed: seed, Steps: steps}
				r := Run(cfg)
				mu.Lock()
				if !r.OK {
					t.Error(failure(cfg, r))
				}
				total += r.Steps
				backends[r.Backend]++
				for k, v := range r.Faults {
					faults[k] += v
				}
				if testing.Verbose() {
					fmt.Printf("seed %d ok=%v %s hash=%016x steps=%d restores=%d checkpoints=%d faults=%v\n",
						r.Seed, r.OK, r.Backend, r.TraceHash, r.Steps, r.Restores, r.Checkpoints, r.Faults)
				}
				mu.Unlock()
			}
		})
	}
	for seed := uint64(first); seed < uint64(first+n); seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	d := time.Since(start)
	t.Logf("%d seeds %v in %v (%.0f seeds/min), %d steps; faults %v", n, backends, d.Round(time.Millisecond), float64(n)/d.Minutes(), total, faults)
}

// A seed determines its run: twice the same trace hash, on both backends.
func TestSameSeedSameTraceHash(t *testing.T) {
	for _, cfg := range []Config{
		{Seed: 7, Steps: 3000},
		{Seed: 11, Steps: 1500, Backends: []string{barrier.BackendPaimon}, Events: 50},
	} {
		a, b := Run(cfg), Run(cfg)
		if !a.OK {
			t.Fatal(failure(cfg, a))
		}
		if a.TraceHash != b.TraceHash || a.Steps != b.Steps {
			t.Fatalf("seed %d (%s): trace hashes %016x (%d steps) and %016x (%d steps) differ", cfg.Seed, a.Backend, a.TraceHash, a.Steps, b.TraceHash, b.Steps)
		}
		if len(a.Faults) == 0 {
			t.Fatalf("seed %d injected no fault", cfg.Seed)
		}
	}
}

// The same workload on the real actor system, with real files: the actors
// run on goroutines, so -race sees what the simulation cannot.
func TestRealSystem(t *testing.T) {
	for _, cfg := range []Config{
		{Seed: 3, Dir: t.TempDir(), Events: 300, Backends: []string{barrier.BackendMemory}},
		{Seed: 4, Dir: t.TempDir(), Events: 300, Backends: []string{barrier.BackendMemory}},
		{Seed: 5, Dir: t.TempDir(), Events: 120, Backends: []string{barrier.BackendPaimon}},
	} {
		r := Run(cfg)
		if !r.OK {
			t.Fatalf("real system, seed %d (%s): %v\n%s", cfg.Seed, r.Backend, r.Err, strings.Join(r.Trace, "\n"))
		}
		if r.Restores == 0 {
			t.Fatalf("real system, seed %d: no restore", cfg.Seed)
		}
	}
}
