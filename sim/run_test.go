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
	replay := fmt.Sprintf("go run ./cmd/lakestate sim --seed %d --steps %d", r.Seed, cfg.Steps)
	if cfg.Events > 0 {
		replay += fmt.Sprintf(" --events %d", cfg.Events)
	}
	if cfg.Backends != nil {
		replay += " --backends " + strings.Join(cfg.Backends, ",")
	}
	return fmt.Sprintf("seed %d failed at step %d: %v\nreplay: %s\n%s", r.Seed, r.Step, r.Err, replay, strings.Join(r.Trace, "\n"))
}

// The CI sweep's seeds: a faulty phase of ciSteps and ciEvents events, on
// the memory backend unless LAKESTATE_SIM_BACKENDS says otherwise (paimon
// seeds cost several times more; TestPaimonSeeds runs a few).
const (
	ciSteps  = 3000
	ciEvents = 300
)

func backendsEnv() []string {
	if v := os.Getenv("LAKESTATE_SIM_BACKENDS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{barrier.BackendMemory}
}

// TestSeeds runs the workload over 200 seeds with every fault kind, two
// seeds at a time. LAKESTATE_SIM_SEEDS, LAKESTATE_SIM_FIRST,
// LAKESTATE_SIM_STEPS, LAKESTATE_SIM_EVENTS and LAKESTATE_SIM_BACKENDS
// widen the sweep.
func TestSeeds(t *testing.T) {
	steps, events, backends := envInt("LAKESTATE_SIM_STEPS", ciSteps), envInt("LAKESTATE_SIM_EVENTS", ciEvents), backendsEnv()
	sweep(t, envInt("LAKESTATE_SIM_SEEDS", 200), envInt("LAKESTATE_SIM_FIRST", 1), func(seed uint64) Config {
		return Config{Seed: seed, Steps: steps, Events: events, Backends: backends}
	})
}

// TestPaimonSeeds runs a few short seeds on the paimon backend, where
// files are shared between checkpoints, levels are compacted and the local
// disk fails.
func TestPaimonSeeds(t *testing.T) {
	sweep(t, 10, 1, func(seed uint64) Config {
		return Config{Seed: seed, Steps: 1500, Events: 60, Backends: []string{barrier.BackendPaimon}}
	})
}

// TestPaimonSeedsCutCompactions runs paimon seeds with a 1 KiB shaping
// step, so universal compactions are cut into key-range steps (files partly
// hidden by deletion vectors between steps) while crashes, failed uploads and
// aborted checkpoints interleave with them.
func TestPaimonSeedsCutCompactions(t *testing.T) {
	sweep(t, envInt("LAKESTATE_SIM_CUT_SEEDS", 4), 1, func(seed uint64) Config {
		return Config{Seed: seed, Steps: 4000, Events: 1500, StepBytes: 1 << 10, Backends: []string{barrier.BackendPaimon}}
	})
}

// sweep runs n seeds from first, two at a time.
func sweep(t *testing.T, n, first int, config func(uint64) Config) {
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	var total uint64
	faults, backends := map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for range min(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for seed := range seeds {
				cfg := config(seed)
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
