package subtask_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkFreezeCommit compares the operator's pause at a barrier: Flush
// (the synchronous commit) against Freeze, with the Commit that runs off the
// operator timed apart. An op is one checkpoint of an interval that
// read-modified-wrote benchCheckpoint batches of an aggregate (value state),
// put one entry per record into a join side (map state, at most four
// entries per key) and pushed it onto a top-3 list (list state), over
// benchKeys committed keys. Metrics are milliseconds
// per checkpoint: pause (Flush or Freeze) and commit (Commit, off the
// operator).
func BenchmarkFreezeCommit(b *testing.B) {
	for _, mode := range []string{"flush", "freeze"} {
		b.Run(mode, func(b *testing.B) {
			s, agg := benchStore(b, paimonCase(b))
			side := must[*subtask.MapState](b)(s.Map(joinLayout(0)))
			top := must[*subtask.ListState](b)(s.List(subtask.Layout{Name: "top", Key: bigintKey,
				Value: []subtask.Column{{Name: "n", Type: table.BigInt()}}}))
			id := int64(1)
			var err error
			r := rand.New(rand.NewPCG(1, 1))
			ks := make([]subtask.Key, benchBatch)
			vals := make([]subtask.Row, benchBatch)
			var out []subtask.Row
			var mes []*subtask.MapEntries
			var lists [][]subtask.Row
			var pause, commit time.Duration
			seq := int64(0)
			subs := []subtask.Row{sub("row-0"), sub("row-1"), sub("row-2"), sub("row-3")}
			for b.Loop() {
				for range benchCheckpoint {
					for i := range ks {
						ks[i] = key(r.Int64N(2 * benchKeys))
					}
					if out, err = agg.GetBatch(ks, out); err != nil {
						b.Fatal(err)
					}
					agg.PutBatch(ks, foldCounts(out, vals))
					if mes, err = side.GetBatch(ks, mes); err != nil {
						b.Fatal(err)
					}
					if lists, err = top.GetBatch(ks, lists); err != nil {
						b.Fatal(err)
					}
					for i, me := range mes {
						seq++
						me.Put(subs[seq%4], row(seq))
						l := append([]subtask.Row{row(seq)}, lists[i]...)
						top.Put(ks[i], l[:min(len(l), 3)])
					}
					s.EndBatch()
				}
				id++
				start := time.Now()
				if mode == "flush" {
					if _, err := s.Flush(id); err != nil {
						b.Fatal(err)
					}
					pause += time.Since(start)
					continue
				}
				f, err := s.Freeze(id)
				if err != nil {
					b.Fatal(err)
				}
				frozen := time.Now()
				pause += frozen.Sub(start)
				if _, err := f.Commit(); err != nil {
					b.Fatal(err)
				}
				commit += time.Since(frozen)
				if err := s.Release(f, true, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(pause.Microseconds())/1e3/float64(b.N), "pause-ms/op")
			if mode == "freeze" {
				b.ReportMetric(float64(commit.Microseconds())/1e3/float64(b.N), "commit-ms/op")
			}
		})
	}
}

// BenchmarkFrozenGetBatch reads an aggregate while the last interval's
// writes (a quarter of the keys, half of them new) are frozen and not yet
// committed, against the same reads once they are flushed: the price of
// the frozen buffer's lookup before the table.
func BenchmarkFrozenGetBatch(b *testing.B) {
	for _, mode := range []string{"flushed", "frozen"} {
		b.Run(mode, func(b *testing.B) {
			s, agg := benchStore(b, paimonCase(b))
			for k := int64(0); k < benchKeys/2; k++ {
				agg.Put(key(2*k+benchKeys/2), row(k, 2))
			}
			if mode == "flushed" {
				must[subtask.Checkpoint](b)(s.Flush(2))
			} else {
				f := must[*subtask.FrozenFlush](b)(s.Freeze(2))
				b.Cleanup(func() {
					if _, err := f.Commit(); err != nil {
						b.Error(err)
					}
				})
			}
			var out []subtask.Row
			benchBatches(b, s, 2*benchKeys, false, func(ks []subtask.Key) {
				var err error
				if out, err = agg.GetBatch(ks, out); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// paimonCase is the paimon backend of the tests' backend cases.
func paimonCase(b *testing.B) backendCase {
	for _, bc := range backendCases {
		if bc.name == "paimon" {
			return bc
		}
	}
	b.Fatal("no paimon backend case")
	return backendCase{}
}
