package subtask_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/lakestate/lakestate/subtask"
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
