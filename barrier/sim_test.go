package barrier_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
)

// simRun drives one seeded simulation of checkpoints with a failed upload in
// between and returns the trace hash, checking the results on the way.
func simRun(t *testing.T, seed uint64) uint64 {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	cfg := jobConfig{backend: barrier.BackendMemory, parallelism: 3, maxP: 16, retain: 2, sim: seed}
	j := startJob(t, blobs, fs, root, cfg)
	for round := range int64(4) {
		for k := range int64(40) {
			if (k+round)%3 == 0 {
				j.put(round*100+k, k)
			}
		}
		if round == 2 {
			f := blobs.inject(&blobFault{op: "put", times: 1, match: func(n string) bool { return strings.HasPrefix(n, "shared/chk-3/") }})
			if o := j.checkpoint(barrier.KindCheckpoint); o.err == nil || f.hits != 1 {
				t.Fatalf("seed %d: checkpoint with a failed upload: %v (hits %d)", seed, o.err, f.hits)
			}
			blobs.clearFaults()
		}
		j.mustComplete(barrier.KindCheckpoint)
	}
	j.checkNoLeaks()
	want := j.get(0, 1, 2, 3, 39)
	hash := j.sim.TraceHash()
	j.stop()
	cfg.restoreLatest, cfg.parallelism = true, 2
	r := startJob(t, blobs, fs, root, cfg)
	if got := r.get(0, 1, 2, 3, 39); !slices.Equal(got, want) {
		t.Fatalf("seed %d: restored %v, want %v", seed, got, want)
	}
	r.stop()
	return hash
}

// Seeded simulations of the coordinator, uploader and stores: each seed runs
// twice to the same trace hash.
func TestSimulatedCheckpoints(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		a, b := simRun(t, seed), simRun(t, seed)
		if a != b {
			t.Fatalf("seed %d: trace hashes %x and %x differ; replay: go test ./barrier -run TestSimulatedCheckpoints", seed, a, b)
		}
	}
}
