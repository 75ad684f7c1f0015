package compaction

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/table"
)

// bulk commits keys (ascending, in bucket 0 of a one-bucket table) as
// level-0 files of at most chunk rows each, in one data commit, without
// touching the model. Values are 16-byte strings and a write time.
func (e *env) bulk(keys []int64, chunk int, tag string) int64 {
	e.tb.Helper()
	sch, err := e.writer.Schema().ArrowSchema()
	if err != nil {
		e.tb.Fatal(err)
	}
	dir, err := e.writer.BucketDir(table.EmptyBinaryRow(), 0)
	if err != nil {
		e.tb.Fatal(err)
	}
	var added []table.ManifestEntry
	for lo := 0; lo < len(keys); lo += chunk {
		hi := min(len(keys), lo+chunk)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		seqs := make([]int64, 0, hi-lo)
		for _, k := range keys[lo:hi] {
			rb.Field(0).(*array.Int32Builder).Append(0)
			rb.Field(1).(*array.Int64Builder).Append(k)
			rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("%s-%011d", tag, k%100000000000))
			rb.Field(3).(*array.Int64Builder).Append(e.now)
			seqs = append(seqs, e.seq[0])
			e.seq[0]++
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		meta, err := table.WriteDataFile(e.writer.FileIO(), path.Join(dir, e.writer.NewDataFileName()), e.writer.Schema(), rec, seqs, nil, table.DataFileOptions{})
		rec.Release()
		if err != nil {
			e.tb.Fatal(err)
		}
		added = append(added, table.ManifestEntry{Kind: table.FileAdd, Partition: table.EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: meta})
	}
	e.commits++
	res, err := e.writer.CommitAppend(added, table.CommitInfo{User: "store", Identifier: e.commits, TimeMillis: e.now})
	if err != nil {
		e.tb.Fatal(err)
	}
	return res.SnapshotID
}

// randomKeys draws n distinct keys of the form 2*i, i in [0, space), sorted.
func randomKeys(rng *rand.Rand, space int64, n int) []int64 {
	seen := map[int64]bool{}
	for len(seen) < n {
		seen[2*rng.Int64N(space)] = true
	}
	out := make([]int64, 0, n)
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func evenKeys(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 2 * int64(i)
	}
	return out
}

func benchSession(b *testing.B, e *env, cfg Config) *Session {
	s, err := NewSession(e.tbl, cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func (e *env) barrier(s *Session, snap int64) {
	e.now += 1000
	if _, err := s.Barrier(snap, e.now); err != nil {
		e.tb.Fatal(err)
	}
}

// BenchmarkBarrierRound times the minimal round of one checkpoint's delta
// (1000 updated keys spread over the whole key space) on tables of 1M and
// 10M rows (100k and 1M with -short). Shaping runs between rounds, off the
// clock, as it does between barriers. Read cost is reported per round.
func BenchmarkBarrierRound(b *testing.B) {
	benchBarrierRounds(b, func(rng *rand.Rand, rows int64) []int64 { return randomKeys(rng, rows, 1000) })
}

// benchBarrierRounds times barrier rounds over a base of each size, every
// round's delta drawn by delta, with the table fully shaped before each.
func benchBarrierRounds(b *testing.B, delta func(rng *rand.Rand, rows int64) []int64) {
	sizes := []int64{1_000_000, 10_000_000}
	if testing.Short() {
		sizes = []int64{100_000, 1_000_000}
	}
	for _, rows := range sizes {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			e := newEnv(b, 1, nil)
			s := benchSession(b, e, Config{})
			e.barrier(s, e.bulk(evenKeys(rows), 500_000, "base"))
			rng := rand.New(rand.NewPCG(1, 2))
			// The session's first lookups open the deep files, once.
			warm := delta(rng, rows)
			e.barrier(s, e.bulk(warm, len(warm), "warm"))
			var opens int
			var bytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.shapeAll(s)
				ks := delta(rng, rows)
				snap := e.bulk(ks, len(ks), fmt.Sprintf("u%d", i))
				o0, b0 := e.fio.dataReads()
				b.StartTimer()
				e.barrier(s, snap)
				b.StopTimer()
				o1, b1 := e.fio.dataReads()
				opens, bytes = opens+o1-o0, bytes+b1-b0
				b.StartTimer()
			}
			b.ReportMetric(float64(opens)/float64(b.N), "files-opened/op")
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes-read/op")
		})
	}
}

// BenchmarkBarrierRoundFresh is BenchmarkBarrierRound with the delta of a
// dedup over a high-cardinality key (Nexmark q18): 20000 keys per round,
// all new, spread over the whole key space. Every key misses every deeper
// level, and at this density it falls into nearly every page of each:
// bytes read per round follow the table, not the delta.
func BenchmarkBarrierRoundFresh(b *testing.B) {
	benchBarrierRounds(b, func(rng *rand.Rand, rows int64) []int64 {
		ks := randomKeys(rng, rows, 20_000)
		for i := range ks {
			ks[i]++ // odd: absent from the even base
		}
		return ks
	})
}

// BenchmarkMissProbe grows a table through 100 checkpoints (each inserts
// 20000 new keys and updates 2000 old ones; rounds and budgeted shaping run
// as in production, up to 2M rows) and times a batch of 256 absent keys
// probed against the newest snapshot at checkpoints 1, 10, 25, 50 and 100.
// A miss decodes, in each sorted run, the one page whose key range covers
// it, so the time per key is bounded by the runs, not the rows; it rises
// only while the batch still shares pages (small tables) and then stays
// flat.
func BenchmarkMissProbe(b *testing.B) {
	e := newEnv(b, 1, map[string]string{table.OptionTargetFileSize: "8mb"})
	s := benchSession(b, e, Config{ShapingBudget: 16 << 20, StepBytes: 8 << 20})
	rng := rand.New(rand.NewPCG(3, 4))
	next := int64(0)
	sch, err := e.tbl.Schema().ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	keySchema := arrowKeySchema(sch)
	for chk := 1; chk <= 100; chk++ {
		keys := make([]int64, 0, 22000)
		for i := 0; i < 20000; i++ {
			keys = append(keys, 2*(next+int64(i)))
		}
		if next > 0 {
			keys = append(keys, randomKeys(rng, next, 2000)...)
		}
		next += 20000
		slices.Sort(keys)
		keys = slices.Compact(keys)
		e.barrier(s, e.bulk(keys, len(keys), fmt.Sprintf("c%d", chk)))
		e.shapeAll(s)
		if chk != 1 && chk != 10 && chk != 25 && chk != 50 && chk != 100 {
			continue
		}
		latest, _, err := e.tbl.LatestSnapshotID()
		if err != nil {
			b.Fatal(err)
		}
		view, err := e.tbl.View(latest)
		if err != nil {
			b.Fatal(err)
		}
		misses := make([]int64, 256)
		for i := range misses {
			misses[i] = 2*rng.Int64N(next) + 1
		}
		slices.Sort(misses)
		misses = slices.Compact(misses)
		probe := probeRecord(keySchema, misses)
		b.Run(fmt.Sprintf("chk=%d/rows=%d/runs=%d", chk, next, s.Backpressure().SortedRuns), func(b *testing.B) {
			// The view opens its files on first use, once.
			warm, err := view.Probe(probe)
			if err != nil {
				b.Fatal(err)
			}
			warm.Release()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec, err := view.Probe(probe)
				if err != nil {
					b.Fatal(err)
				}
				if rec.NumRows() != 0 {
					b.Fatalf("%d absent keys found", rec.NumRows())
				}
				rec.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(misses)), "ns/key")
		})
		probe.Release()
		view.Close()
	}
}

// BenchmarkShapingBudget runs 100 checkpoints of 3000 updates over 200k
// keys, with and without a shaping budget, and reports write amplification
// (bytes written / bytes ingested), the bytes shaping wrote per interval and
// the new bytes a checkpoint would upload (files live at its round's
// snapshot and not at the previous checkpoint's). With updates spread over
// the whole key space every compaction is one key-disjoint section, which
// a step can cut only by key range between files of its output level (here
// none is: Stats.BoundedSteps stays 0): the budget spreads steps over
// intervals, and a step larger than the budget runs alone. Less shaping leaves level 1
// occupied more often, which the rounds pay for by merging into it
// (round-rewrite-KiB/chk, written in the sync phase).
func BenchmarkShapingBudget(b *testing.B) {
	for _, budget := range []int64{0, 512 << 10, 128 << 10} {
		b.Run(fmt.Sprintf("budget=%dKiB", budget>>10), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e := newEnv(b, 1, map[string]string{table.OptionTargetFileSize: "2mb"})
				s := benchSession(b, e, Config{ShapingBudget: budget, StepBytes: 1 << 20})
				rng := rand.New(rand.NewPCG(5, 6))
				e.barrier(s, e.bulk(evenKeys(200_000), 200_000, "base"))
				prev := liveSizes(b, e)
				var ingested int64
				var uploads, shaping []int64
				for chk := 0; chk < 100; chk++ {
					snap := e.bulk(randomKeys(rng, 200_000, 3000), 3000, fmt.Sprintf("c%d", chk))
					ingested += lastAppendBytes(b, e, snap)
					shaping = append(shaping, s.Stats().IntervalShapingBytes)
					e.barrier(s, snap)
					cur := liveSizes(b, e)
					var up int64
					for name, size := range cur {
						if _, ok := prev[name]; !ok {
							up += size
						}
					}
					uploads = append(uploads, up)
					prev = cur
					e.shapeAll(s)
				}
				st := s.Stats()
				written := ingested + st.RoundBytes + st.ShapingBytes
				slices.Sort(uploads)
				slices.Sort(shaping)
				b.ReportMetric(float64(written)/float64(ingested), "write-amp")
				b.ReportMetric(float64(uploads[len(uploads)-1]>>10), "max-upload-KiB")
				b.ReportMetric(float64(uploads[len(uploads)*95/100]>>10), "p95-upload-KiB")
				b.ReportMetric(float64(sum(uploads)>>10)/float64(len(uploads)), "mean-upload-KiB")
				b.ReportMetric(float64(shaping[len(shaping)-1]>>10), "max-shaping-KiB/interval")
				b.ReportMetric(float64(st.RoundBytes>>10)/100, "round-rewrite-KiB/chk")
				b.ReportMetric(float64(s.Backpressure().SortedRuns), "runs")
			}
		})
	}
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// liveSizes maps the live data files of the newest snapshot to their sizes.
func liveSizes(tb testing.TB, e *env) map[string]int64 {
	latest, _, err := e.tbl.LatestSnapshotID()
	if err != nil {
		tb.Fatal(err)
	}
	live, _, err := e.tbl.LiveFiles(latest)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range live {
		out[f.File.FileName] = f.File.FileSize
	}
	return out
}

// shapeInterval runs the session's shaping jobs until they have read
// interval bytes of data files (or none is left) and returns the wait of
// the barrier that arrives then: what the step in progress reads past the
// interval.
func shapeInterval(b *testing.B, e *env, s *Session, interval int64) (wait int64) {
	var shaped int64
	for shaped < interval {
		j := s.NextJob(e.now)
		if j == nil {
			break
		}
		_, r0 := e.fio.dataReads()
		if err := s.Finish(j.Run()); err != nil {
			b.Fatal(err)
		}
		_, r1 := e.fio.dataReads()
		shaped += r1 - r0
		wait = max(0, shaped-interval)
	}
	return wait
}

// pct is the p-th percentile of xs, in KiB.
func pct(xs []int64, p int) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return float64(xs[(len(xs)-1)*p/100]) / 1024
}

func lastAppendBytes(tb testing.TB, e *env, snap int64) int64 {
	entries, _, err := e.tbl.ReadDelta(snap)
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, f := range entries {
		n += f.File.FileSize
	}
	return n
}

// arrowKeySchema is the probe schema: the primary-key fields of sch.
func arrowKeySchema(sch *arrow.Schema) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{sch.Field(0), sch.Field(1)}, nil)
}

func probeRecord(sch *arrow.Schema, keys []int64) arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	for _, k := range keys {
		rb.Field(0).(*array.Int32Builder).Append(0)
		rb.Field(1).(*array.Int64Builder).Append(k)
	}
	return rb.NewRecordBatch()
}

// BenchmarkSyncWait replays the sync phase of a dedup over a growing
// high-cardinality key space (Nexmark q18): each checkpoint inserts 20000
// new keys and updates 5000 old ones, all spread over the key space, so
// every run spans it. Time is counted in bytes read, so the figures do not
// depend on the machine: between two barriers shaping reads 4 MiB (its
// speed against the interval), then the barrier arrives and waits for the
// step in progress to finish (wait-KiB: what that step reads past the
// interval), and its round runs (round-read-KiB, round-written-KiB).
// Reported: p50, p99 and max over the checkpoints.
func BenchmarkSyncWait(b *testing.B) {
	const checkpoints, interval = 150, 4 << 20
	for i := 0; i < b.N; i++ {
		e := newEnv(b, 1, map[string]string{table.OptionTargetFileSize: "8mb"})
		s := benchSession(b, e, Config{StepBytes: 2 << 20})
		rng := rand.New(rand.NewPCG(7, 8))
		next := int64(0)
		var waits, reads, writes []int64
		for chk := 0; chk < checkpoints; chk++ {
			keys := make([]int64, 0, 25000)
			for range 20000 {
				keys = append(keys, 2*(rng.Int64N(1<<40)))
			}
			if next > 0 {
				keys = append(keys, randomKeys(rng, next, 5000)...)
			}
			next += 20000
			slices.Sort(keys)
			keys = slices.Compact(keys)
			snap := e.bulk(keys, len(keys), fmt.Sprintf("c%d", chk))
			wait := shapeInterval(b, e, s, interval)
			_, r0 := e.fio.dataReads()
			w0 := s.Stats().RoundBytes
			e.barrier(s, snap)
			_, r1 := e.fio.dataReads()
			waits = append(waits, wait)
			reads = append(reads, r1-r0)
			writes = append(writes, s.Stats().RoundBytes-w0)
		}
		for _, m := range []struct {
			name string
			xs   []int64
		}{{"wait", waits}, {"round-read", reads}, {"round-written", writes}} {
			b.ReportMetric(pct(m.xs, 50), m.name+"-p50-KiB")
			b.ReportMetric(pct(m.xs, 99), m.name+"-p99-KiB")
			b.ReportMetric(pct(m.xs, 100), m.name+"-max-KiB")
		}
		st := s.Stats()
		b.ReportMetric(float64(st.ShapingBytes+st.RoundBytes)/float64(1<<20), "rewritten-MiB")
		b.ReportMetric(float64(s.Backpressure().SortedRuns), "runs")
	}
}

// BenchmarkWriteAmplification replays an append-mostly state (a join side
// keyed by unique ids, Nexmark q20): each checkpoint adds 3000 new keys
// spread over the whole key space and updates 100 old ones, with shaping
// run to completion between barriers. Every merge rewrites whole runs,
// since every run spans the key space. Reported: write amplification
// (bytes written / bytes ingested), the mean and largest new bytes a
// checkpoint uploads (files live at its round's snapshot and not at the
// previous checkpoint's), and the most and the mean sorted runs a bucket
// held after a round (what a probe that misses decodes a page of each).
func BenchmarkWriteAmplification(b *testing.B) {
	for _, checkpoints := range []int{25, 100, 300} {
		b.Run(fmt.Sprintf("checkpoints=%d", checkpoints), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e := newEnv(b, 1, map[string]string{table.OptionTargetFileSize: "2mb"})
				s := benchSession(b, e, Config{})
				rng := rand.New(rand.NewPCG(9, 10))
				prev := map[string]int64{}
				var ingested int64
				var uploads []int64
				var keys []int64
				runs, runSum := 0, 0
				for chk := 0; chk < checkpoints; chk++ {
					batch := make([]int64, 0, 3100)
					for range 3000 {
						batch = append(batch, 2*rng.Int64N(1<<40))
					}
					for range min(100, len(keys)) {
						batch = append(batch, keys[rng.IntN(len(keys))])
					}
					keys = append(keys, batch[:3000]...)
					slices.Sort(batch)
					batch = slices.Compact(batch)
					snap := e.bulk(batch, len(batch), fmt.Sprintf("c%d", chk))
					ingested += lastAppendBytes(b, e, snap)
					e.barrier(s, snap)
					runs = max(runs, s.Backpressure().SortedRuns)
					runSum += s.Backpressure().SortedRuns
					cur := liveSizes(b, e)
					var up int64
					for name, size := range cur {
						if _, ok := prev[name]; !ok {
							up += size
						}
					}
					uploads = append(uploads, up)
					prev = cur
					e.shapeAll(s)
				}
				st := s.Stats()
				written := ingested + st.RoundBytes + st.ShapingBytes
				b.ReportMetric(float64(written)/float64(ingested), "write-amp")
				b.ReportMetric(float64(sum(uploads)>>10)/float64(len(uploads)), "mean-upload-KiB")
				b.ReportMetric(float64(slices.Max(uploads)>>10), "max-upload-KiB")
				b.ReportMetric(float64(runs), "max-runs")
				b.ReportMetric(float64(runSum)/float64(checkpoints), "mean-runs")
			}
		})
	}
}
