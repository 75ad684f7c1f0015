package compaction

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkAppendLag replays an append-only state whose checkpoints ingest
// about as much as shaping merges in an interval (Nexmark q20's bids, whose
// checkpoints add 40-60 MB against 32 MB steps): each checkpoint adds 30000
// new keys spread over the whole key space, and between two barriers
// shaping reads speed times the bytes the checkpoint ingested (bytes read
// are the clock, as in BenchmarkSyncWait), then the barrier waits for the
// step in progress. A compaction of the whole tree then spans more
// intervals than there are free levels: the rounds fill them and merge into
// level 1 in the sync phase, rewriting it whole round after round.
// Reported: bytes rewritten (shaping and rounds) per byte ingested, the
// rounds' share and largest write, what a barrier waited for (p99, max) and
// the mean sorted runs after a round.
func BenchmarkAppendLag(b *testing.B) {
	for _, speed := range []float64{0.7, 1.5, 4} {
		b.Run(fmt.Sprintf("speed=%.1f", speed), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchAppendLag(b, speed)
			}
		})
	}
}

func benchAppendLag(b *testing.B, speed float64) {
	const checkpoints, perCheckpoint = 30, 30000
	e := newEnv(b, 1, map[string]string{table.OptionTargetFileSize: "8mb"})
	s := benchSession(b, e, Config{StepBytes: 1 << 20})
	rng := rand.New(rand.NewPCG(11, 12))
	var ingested int64
	var waits, roundWrites []int64
	runSum := 0
	for chk := 0; chk < checkpoints; chk++ {
		keys := make([]int64, 0, perCheckpoint)
		for range perCheckpoint {
			keys = append(keys, 2*rng.Int64N(1<<40))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		snap := e.bulk(keys, len(keys), fmt.Sprintf("c%d", chk))
		delta := lastAppendBytes(b, e, snap)
		ingested += delta
		interval := int64(speed * float64(delta))
		wait := shapeInterval(b, e, s, interval)
		w0 := s.Stats().RoundBytes
		e.barrier(s, snap)
		waits = append(waits, wait)
		roundWrites = append(roundWrites, s.Stats().RoundBytes-w0)
		runSum += s.Backpressure().SortedRuns
	}
	st := s.Stats()
	b.ReportMetric(float64(st.ShapingBytes+st.RoundBytes)/float64(ingested), "rewritten/ingested")
	b.ReportMetric(float64(st.RoundBytes)/float64(ingested), "round-written/ingested")
	b.ReportMetric(pct(roundWrites, 100), "round-written-max-KiB")
	b.ReportMetric(pct(waits, 99), "wait-p99-KiB")
	b.ReportMetric(pct(waits, 100), "wait-max-KiB")
	b.ReportMetric(float64(runSum)/checkpoints, "mean-runs")
	b.ReportMetric(float64(st.Steps), "steps")
}
