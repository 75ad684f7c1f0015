package nexmark

import (
	"fmt"
	"testing"
)

// BenchmarkGenerator reports generator throughput in events/s for batches of
// the size the engine processes.
func BenchmarkGenerator(b *testing.B) {
	for _, batchSize := range []int{1, 1024} {
		b.Run(fmt.Sprintf("batch=%d", batchSize), func(b *testing.B) {
			g, err := NewGenerator(DefaultConfig(), 0, 1)
			if err != nil {
				b.Fatal(err)
			}
			batch := make([]Event, batchSize)
			events := 0
			b.ReportAllocs()
			for b.Loop() {
				events += g.Next(batch)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}
