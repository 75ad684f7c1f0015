package subtask_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

const (
	benchKeys       = 100_000 // committed keys before the timed part
	benchBatch      = 1024    // keys per batch
	benchCheckpoint = 64      // batches per checkpoint
)

// benchStore returns a store whose aggregate state holds benchKeys committed
// keys (0..benchKeys-1).
func benchStore(b *testing.B, bc backendCase) (*subtask.Store, *subtask.ValueState) {
	s, agg := benchBuffered(b, bc)
	if _, err := s.Flush(1); err != nil {
		b.Fatal(err)
	}
	return s, agg
}

// benchBuffered returns a store whose aggregate state's write buffer holds
// benchKeys keys (0..benchKeys-1), none committed.
func benchBuffered(b *testing.B, bc backendCase) (*subtask.Store, *subtask.ValueState) {
	s := subtask.NewStore(bc.fresh(b))
	b.Cleanup(func() { s.Backend().Close() })
	agg, err := s.Value(aggLayout(0))
	if err != nil {
		b.Fatal(err)
	}
	for k := int64(0); k < benchKeys; k++ {
		agg.Put(key(k), row(k, 1))
	}
	return s, agg
}

// foldCounts is an aggregate's fold: each row of out (nil: absent) counted
// once more into vals, which it returns.
func foldCounts(out, vals []subtask.Row) []subtask.Row {
	for i, cur := range out {
		if cur == nil {
			vals[i] = row(1, 1)
		} else {
			vals[i] = row(cur[0].Int()+1, cur[1].Int()+1)
		}
	}
	return vals
}

// benchBatches runs fn over batches of keys drawn from [0, space) until b.N
// keys were processed, with a checkpoint every benchCheckpoint batches when
// checkpoints is set.
func benchBatches(b *testing.B, s *subtask.Store, space int64, checkpoints bool, fn func(ks []subtask.Key)) {
	r := rand.New(rand.NewPCG(1, 1))
	ks := make([]subtask.Key, benchBatch)
	cols := make([]subtask.Row, benchBatch)
	for i := range cols {
		cols[i] = make(subtask.Row, 1)
	}
	id := int64(1)
	b.ResetTimer()
	cpu0 := processCPU(b)
	for done, batches := 0, 0; done < b.N; batches++ {
		n := min(benchBatch, b.N-done)
		for i := 0; i < n; i++ {
			k := r.Int64N(space)
			cols[i][0] = subtask.Int(k)
			ks[i] = subtask.Key{Group: kgOf(k), Cols: cols[i]}
		}
		fn(ks[:n])
		s.EndBatch()
		done += n
		if checkpoints && batches%benchCheckpoint == benchCheckpoint-1 {
			id++
			if _, err := s.Flush(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process used so far, in nanoseconds, every
// thread included (GC, Pebble's compactions). On a shared machine it is a
// steadier measure than wall time.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkValueGetBatch reads committed keys (hits) or keys the table
// lacks (misses), one probe per batch, without checkpoints (nothing is
// written).
func BenchmarkValueGetBatch(b *testing.B) {
	for _, bc := range backendCases {
		for _, hit := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/hit=%v", bc.name, hit), func(b *testing.B) {
				s, agg := benchStore(b, bc)
				var out []subtask.Row
				offset := int64(0)
				if !hit {
					offset = benchKeys
				}
				shifted := make([]subtask.Key, benchBatch)
				benchBatches(b, s, benchKeys, false, func(ks []subtask.Key) {
					for i, k := range ks {
						shifted[i] = subtask.Key{Group: k.Group, Cols: subtask.Row{subtask.Int(k.Cols[0].Int() + offset)}}
					}
					var err error
					if out, err = agg.GetBatch(shifted[:len(ks)], out); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// BenchmarkValuePutBatch writes keys without reading them, including the
// flushes every benchCheckpoint batches.
func BenchmarkValuePutBatch(b *testing.B) {
	for _, bc := range backendCases {
		b.Run(bc.name, func(b *testing.B) {
			s, agg := benchStore(b, bc)
			vals := make([]subtask.Row, benchBatch)
			benchBatches(b, s, 2*benchKeys, true, func(ks []subtask.Key) {
				for i, k := range ks {
					vals[i] = row(k.Cols[0].Int(), 2)
				}
				agg.PutBatch(ks, vals[:len(ks)])
			})
		})
	}
}

// BenchmarkValueReadModifyWrite is an aggregate's batch: GetBatch, fold,
// PutBatch, with the flushes every benchCheckpoint batches.
func BenchmarkValueReadModifyWrite(b *testing.B) {
	for _, bc := range backendCases {
		b.Run(bc.name, func(b *testing.B) {
			s, agg := benchStore(b, bc)
			var out []subtask.Row
			vals := make([]subtask.Row, benchBatch)
			benchBatches(b, s, 2*benchKeys, true, func(ks []subtask.Key) {
				var err error
				if out, err = agg.GetBatch(ks, out); err != nil {
					b.Fatal(err)
				}
				agg.PutBatch(ks, foldCounts(out, vals[:len(ks)]))
			})
		})
	}
}

// BenchmarkMapGetBatch reads every entry of committed keys (a join side's
// probe): benchKeys/entries keys with entries entries each.
func BenchmarkMapGetBatch(b *testing.B) {
	const entries = 4
	for _, bc := range backendCases {
		b.Run(bc.name, func(b *testing.B) {
			s := subtask.NewStore(bc.fresh(b))
			b.Cleanup(func() { s.Backend().Close() })
			m, err := s.Map(joinLayout(0))
			if err != nil {
				b.Fatal(err)
			}
			nKeys := int64(benchKeys / entries)
			var mes []*subtask.MapEntries
			for k := int64(0); k < nKeys; k++ {
				if mes, err = m.GetBatch(keys(k), mes); err != nil {
					b.Fatal(err)
				}
				for e := 0; e < entries; e++ {
					mes[0].Put(sub(fmt.Sprintf("row-%d", e)), row(k))
				}
				s.EndBatch()
			}
			if _, err := s.Flush(1); err != nil {
				b.Fatal(err)
			}
			benchBatches(b, s, nKeys, false, func(ks []subtask.Key) {
				if mes, err = m.GetBatch(ks, mes); err != nil {
					b.Fatal(err)
				}
				for _, me := range mes {
					if me.Len() != entries {
						b.Fatalf("%d entries", me.Len())
					}
				}
			})
		})
	}
}

// BenchmarkValueReadModifyWriteBuffered is an aggregate's batch over keys
// its write buffer holds (written this interval, no flush): GetBatch, fold,
// PutBatch, the buffer's own cost without reads of the table.
func BenchmarkValueReadModifyWriteBuffered(b *testing.B) {
	for _, bc := range backendCases {
		b.Run(bc.name, func(b *testing.B) {
			s, agg := benchBuffered(b, bc)
			var out []subtask.Row
			vals := make([]subtask.Row, benchBatch)
			benchBatches(b, s, benchKeys, false, func(ks []subtask.Key) {
				var err error
				if out, err = agg.GetBatch(ks, out); err != nil {
					b.Fatal(err)
				}
				agg.PutBatch(ks, foldCounts(out, vals[:len(ks)]))
			})
		})
	}
}

// BenchmarkValueGroups groups a batch of 16,384 keys, mostly distinct, by
// the slots GetBatch gave them (compare runtime's BenchmarkDistinctKeys,
// which groups the same shape by an index of its own).
func BenchmarkValueGroups(b *testing.B) {
	const n = 16384
	s, agg := benchStore(b, backendCases[0])
	ks := make([]subtask.Key, n)
	for i := range ks {
		ks[i] = key(int64(i*7919) % 12000)
	}
	if _, err := agg.GetBatch(ks, nil); err != nil {
		b.Fatal(err)
	}
	defer s.EndBatch()
	var of, first []int
	b.ReportAllocs()
	for b.Loop() {
		of, first = agg.Groups(of, first)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
