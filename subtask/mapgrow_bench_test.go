package subtask_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkMapHotKeyInserts is a join side that keeps every record, as
// q20's bids: keys come in blocks of 100 (auctions), a new block every 1,500
// inserts; half the inserts go to the block's first key (the hot auction),
// the rest to any key of the block. An op is
// one checkpoint interval of 16 batches (Freeze and Commit included; the
// flush is released after the next interval's first batch, so that batch
// reads through it); put-B/insert is what the Puts alone allocate per insert
// (their rows made beforehand).
func BenchmarkMapHotKeyInserts(b *testing.B) {
	const batches, hotRun, block = 16, 1500, 100
	s := subtask.NewStore(paimonCase(b).fresh(b))
	b.Cleanup(func() { s.Backend().Close() })
	m, err := s.Map(joinLayout(0))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	ks := make([]subtask.Key, benchBatch)
	subs := make([]subtask.Row, benchBatch)
	vals := make([]subtask.Row, benchBatch)
	var mes []*subtask.MapEntries
	var putBytes, inserts uint64
	var ms runtime.MemStats
	seq, id := int64(0), int64(0)
	var frozen *subtask.FrozenFlush
	for b.Loop() {
		id++
		for batch := range batches {
			if batch == 1 && frozen != nil {
				if err := s.Release(frozen, true, nil); err != nil {
					b.Fatal(err)
				}
			}
			for i := range ks {
				seq++
				k := seq / hotRun * block
				if r.IntN(2) == 0 {
					k += r.Int64N(block)
				}
				ks[i], subs[i], vals[i] = key(k), sub(fmt.Sprintf("bid-%012d", seq)), row(1)
			}
			if mes, err = m.GetBatch(ks, mes); err != nil {
				b.Fatal(err)
			}
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			for i, me := range mes {
				me.Put(subs[i], vals[i])
			}
			runtime.ReadMemStats(&ms)
			putBytes += ms.TotalAlloc - before
			inserts += uint64(len(mes))
			s.EndBatch()
		}
		if frozen, err = s.Freeze(id); err != nil {
			b.Fatal(err)
		}
		if _, err := frozen.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(putBytes)/float64(inserts), "put-B/insert")
}

// BenchmarkJoinSideBids is a join's bid side as q20 and q9 drive it, op by
// op one bid: per batch a GetBatch of the bids' auctions, then per bid a Put
// of the stored bid (a side with unique columns writes without a read). Auctions come in blocks
// of 100, a new auction every 16.67 bids; half the bids go to the newest
// block's first auction, the rest to one of the last 100 auctions. Bid ids
// rise.
// A checkpoint interval is 48 batches; its flush (Freeze, Commit and
// Release after the next interval's first batch on paimon, Flush on pebble)
// runs with the timer stopped, so ns/op is the records' path alone.
func BenchmarkJoinSideBids(b *testing.B) {
	for _, backend := range []string{"paimon", "pebble"} {
		b.Run(backend, func(b *testing.B) {
			var bc backendCase
			for _, c := range backendCases {
				if c.name == backend {
					bc = c
				}
			}
			s := subtask.NewStore(bc.fresh(b))
			b.Cleanup(func() { s.Backend().Close() })
			m, err := s.Map(bidSideLayout)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 6))
			const interval, hotRun, block, window = 48, 1667, 100, 100
			ks := make([]subtask.Key, benchBatch)
			subs := make([]subtask.Row, benchBatch)
			vals := make([]subtask.Row, benchBatch)
			var mes []*subtask.MapEntries
			var frozen *subtask.FrozenFlush
			seq, batches, id := int64(0), 0, int64(0)
			// The records' path is timed by its thread's CPU as well: the
			// machine's other load leaves it alone.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var recCPU int64
			b.ResetTimer()
			for done := 0; done < b.N; batches++ {
				if batches%interval == 1 && frozen != nil {
					b.StopTimer()
					if err := s.Release(frozen, true, nil); err != nil {
						b.Fatal(err)
					}
					frozen = nil
					b.StartTimer()
				}
				n := min(benchBatch, b.N-done)
				for i := range n {
					seq++
					last := seq * block / hotRun // the newest auction
					auction := last / block * block
					if r.IntN(2) == 0 {
						auction = max(0, last-r.Int64N(window))
					}
					ks[i] = key(auction)
					subs[i] = subtask.Row{subtask.Int(seq)}
					vals[i] = subtask.Row{subtask.Int(auction), subtask.Int(seq % 997), subtask.Int(seq % 10_000),
						subtask.Str("channel-1"), subtask.Str("https://www.nexmark.com/item.htm?query=1"),
						subtask.Int(1_700_000_000_000 + seq), subtask.Str("extra"), subtask.Int(1)}
				}
				cpu0 := threadCPU(b)
				if mes, err = m.GetBatch(ks[:n], mes); err != nil {
					b.Fatal(err)
				}
				for i, me := range mes {
					me.Put(subs[i], vals[i])
				}
				s.EndBatch()
				recCPU += threadCPU(b) - cpu0
				done += n
				if batches%interval == interval-1 {
					b.StopTimer()
					id++
					if backend == "pebble" {
						if _, err := s.Flush(id); err != nil {
							b.Fatal(err)
						}
					} else {
						if frozen, err = s.Freeze(id); err != nil {
							b.Fatal(err)
						}
						if _, err := frozen.Commit(); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(recCPU)/float64(b.N), "thread-cpu-ns/op")
		})
	}
}

// threadCPU is the CPU time the calling thread used so far, in nanoseconds.
func threadCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// bidSideLayout is a join side storing bids by auction, each by its id.
var bidSideLayout = subtask.Layout{
	Name: "bids",
	Key:  bigintKey,
	Sub:  []subtask.Column{{Name: "id", Type: table.BigInt().NotNull()}},
	Value: []subtask.Column{
		{Name: "auction", Type: table.BigInt()}, {Name: "bidder", Type: table.BigInt()},
		{Name: "price", Type: table.BigInt()}, {Name: "channel", Type: table.String()},
		{Name: "url", Type: table.String()}, {Name: "datetime", Type: table.BigInt()},
		{Name: "extra", Type: table.String()}, {Name: "count", Type: table.BigInt()},
	},
}
