package nexmark

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGenerator reports generator throughput for batches of one event
// and of the source reader's size, of every field of every kind and of q4's
// fields (auctions' id, category and times, bids' auction, price and time),
// in ns of wall and of process CPU per event (on a shared machine the CPU
// figure is the steadier).
func BenchmarkGenerator(b *testing.B) {
	q4 := Wanted{0, auctionID | auctionCategory | auctionDateTime | auctionExpires, bidAuction | bidPrice | bidDateTime}
	for _, c := range []struct {
		name   string
		wanted Wanted
	}{{"all", AllWanted}, {"q4", q4}} {
		for _, batchSize := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/batch=%d", c.name, batchSize), func(b *testing.B) {
				g, err := NewGenerator(DefaultConfig(), 0, 1)
				if err != nil {
					b.Fatal(err)
				}
				batch := make([]Event, batchSize)
				events := 0
				cpu0 := processCPU()
				b.ReportAllocs()
				for b.Loop() {
					events += g.NextWanted(batch, &c.wanted)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
				b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(events), "cpu-ns/event")
			})
		}
	}
}

// processCPU is the user and system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
