package jobs_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

// BenchmarkSourceRead reads the event stream in the engine's batches of
// 16,384 events into rows of every kind, or of bids only (as q18), holding
// a batch's rows until the next batch as the engine's channels do, or of
// bids borrowed, or of q4's projections of auctions and bids (as q4, whose
// source makes them), and reports ns per event, wall and CPU of the whole
// process (the collector's included; on a shared machine the CPU figure is
// the steadier).
func BenchmarkSourceRead(b *testing.B) {
	kept := runtime.OutputUse{Rows: runtime.Kept}
	borrowed := runtime.OutputUse{Rows: runtime.Borrowed}
	unread := runtime.OutputUse{Rows: runtime.Unread}
	for _, c := range []struct {
		name string
		uses []runtime.OutputUse
	}{
		{"all", []runtime.OutputUse{kept, kept, kept}},
		{"bids", []runtime.OutputUse{unread, unread, kept}},
		{"bids-borrowed", []runtime.OutputUse{unread, unread, borrowed}},
		{"q4", []runtime.OutputUse{unread,
			{Rows: runtime.Kept, Columns: []int{jobs.AuctionID, jobs.AuctionCategory, jobs.AuctionDateTime, jobs.AuctionExpires}},
			{Rows: runtime.Kept, Columns: []int{jobs.BidAuction, jobs.BidPrice, jobs.BidDateTime, jobs.BidEventID}}}},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkSourceRead(b, c.uses) })
	}
}

func benchmarkSourceRead(b *testing.B, uses []runtime.OutputUse) {
	const batch = 16384
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = 0
	src := &jobs.Source{Config: cfg, NumSplits: 1}
	r, err := src.Open(0, 0, uses)
	if err != nil {
		b.Fatal(err)
	}
	held := make([]runtime.Row, 0, batch)
	emit := func(_ int, row runtime.Row) { held = append(held, row) }
	events := 0
	cpu0 := processCPU()
	b.ReportAllocs()
	for b.Loop() {
		held = held[:0]
		if _, err := r.Read(batch, emit); err != nil {
			b.Fatal(err)
		}
		events += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(events), "cpu-ns/event")
}

// processCPU is the user and system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
