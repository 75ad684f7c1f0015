package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seedsFromEnv lets a long sweep run from go test: LAKESTATE_SIM_SEEDS=N.
func seedsFromEnv(def int) int {
	if v := os.Getenv("LAKESTATE_SIM_SEEDS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return def
}

func report(t *testing.T, r Result) {
	t.Helper()
	if !r.OK {
		t.Errorf("seed %d failed at step %d: %v\nreplay: go run ./cmd/lakestate sim --seed %d\n%s", r.Seed, r.Step, r.Err, r.Seed, strings.Join(r.Trace, "\n"))
	}
}

func TestSeedsSmoke(t *testing.T) {
	start := time.Now()
	n := seedsFromEnv(20)
	steps := uint64(0)
	faults := map[string]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := Run(Config{Seed: seed, Steps: 8000})
		report(t, r)
		steps += r.Steps
		for k, v := range r.Faults {
			faults[k] += v
		}
		if testing.Verbose() {
			fmt.Printf("seed %d ok=%v hash=%x steps=%d restores=%d ckpts=%d faults=%v\n", r.Seed, r.OK, r.TraceHash, r.Steps, r.Restores, r.Checkpoints, r.Faults)
		}
	}
	t.Logf("%d seeds, %d steps, %v, faults %v", n, steps, time.Since(start), faults)
}
