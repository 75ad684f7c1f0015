package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// probeBench is one benchmark table held both as a deletion-vector Paimon
// table (a View) and as a Pebble database with the same live rows.
type probeBench struct {
	view *View
	db   *pebble.DB
	keys []int64 // every live key
}

// pebbleKey orders like the table's (kg, key).
func pebbleKey(dst []byte, k int64) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(benchKG(k))^1<<31)
	return binary.BigEndian.AppendUint64(dst, uint64(k)^1<<63)
}

func pebbleValue(dst []byte, r benchRow) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Count))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(int64(r.Sum)))
	return append(dst, r.Label...)
}

// pebbleOptions configures the Pebble side as the table is: the same codec
// for its blocks, and a block cache of the budget the table's readers cache
// key pages in.
func pebbleOptions(codec string) *pebble.Options {
	opts := &pebble.Options{DisableWAL: true, CacheSize: keyPageCacheBytes}
	profile := map[string]*sstable.CompressionProfile{"none": sstable.NoCompression, "snappy": sstable.SnappyCompression, "zstd": sstable.ZstdCompression}[codec]
	opts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.UniformDBCompressionSettings(profile) })
	return opts
}

// levelSpec is one level of a benchmark table: the fraction of keys it
// rewrites and how many files it is cut into.
type levelSpec struct {
	level int32
	every int // rewrites every every-th key (1: all keys)
	files int
}

// newProbeBench writes n keys: the first level holds every key, later
// (lower-numbered, newer) levels rewrite a subset with a newer version, and
// deletion vectors mask every superseded row, as the maintenance round
// leaves a table. Pebble gets each level's rows as one flushed batch.
func newProbeBench(b *testing.B, n int, levels []levelSpec, codec string) *probeBench {
	b.Helper()
	dir := b.TempDir()
	var frameBytes int // "zstd-oneframe": each zstd page one frame (the default is 4 KiB frames)
	if codec == "zstd-oneframe" {
		codec, frameBytes = "zstd", -1
	}
	s := benchSchema(true)
	s.Options[OptionFileCompression] = codec
	fio := NewLocalFileIO()
	all := sortedBenchKeys(0, int64(n), 1)
	db, err := pebble.Open(filepath.Join(dir, "pebble"), pebbleOptions(codec))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	type rowAt struct {
		file string
		pos  uint32
	}
	where := map[int64]rowAt{}
	dvs := map[string]*roaring.Bitmap{}
	var entries []ManifestEntry
	seq := int64(0)
	for ver, l := range levels {
		var keys []int64
		for i, k := range all {
			if i%l.every == 0 {
				keys = append(keys, k)
			}
		}
		rows := benchRows(keys, ver)
		batch := db.NewBatch()
		var kb, vb []byte
		for _, r := range rows {
			kb, vb = pebbleKey(kb[:0], r.Key), pebbleValue(vb[:0], r)
			if err := batch.Set(kb, vb, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			b.Fatal(err)
		}
		per := (len(rows) + l.files - 1) / l.files
		for f := 0; f*per < len(rows); f++ {
			part := rows[f*per : min(len(rows), (f+1)*per)]
			rec := benchRecord(s, part)
			name := fmt.Sprintf("data-l%d-%d.parquet", l.level, f)
			m, err := WriteDataFile(fio, filepath.Join(dir, name), s, rec, seqRange(seq, len(part)), nil, DataFileOptions{Level: l.level, ZstdFrameBytes: frameBytes})
			rec.Release()
			if err != nil {
				b.Fatal(err)
			}
			seq += int64(len(part))
			entries = append(entries, ManifestEntry{Kind: FileAdd, Partition: EmptyBinaryRow(), TotalBuckets: 1, File: m})
			for p, r := range part {
				// levels are written oldest first: an earlier row is superseded
				if old, ok := where[r.Key]; ok {
					if dvs[old.file] == nil {
						dvs[old.file] = roaring.New()
					}
					dvs[old.file].Add(old.pos)
				}
				where[r.Key] = rowAt{file: name, pos: uint32(p)}
			}
		}
	}
	waitCompactionsDone(db)
	v, err := NewView(ViewInput{FIO: fio, Schema: s, Files: entries, BucketDir: func([]byte, int32) (string, error) { return dir, nil },
		DeletionVectors: map[BucketKey]map[string]*roaring.Bitmap{{Partition: string(EmptyBinaryRow())}: dvs}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { v.Close() })
	return &probeBench{view: v, db: db, keys: all}
}

// waitCompactionsDone waits until Pebble has no compaction running or due,
// so that its background work does not land in the CPU time of whichever
// side a benchmark times first (the CPU clock is per process).
func waitCompactionsDone(db *pebble.DB) {
	idle, last := 0, int64(-1)
	for idle < 5 {
		m := db.Metrics()
		if m.Compact.NumInProgress == 0 && m.Compact.Count == last {
			idle++
		} else {
			idle = 0
		}
		last = m.Compact.Count
		time.Sleep(20 * time.Millisecond)
	}
}

// probeSets are sets of k random live keys, each sorted by (kg, key).
func (pb *probeBench) probeSets(k, sets int) [][]int64 {
	r := rand.New(rand.NewPCG(uint64(k), uint64(sets)))
	out := make([][]int64, sets)
	for i := range out {
		idx := map[int]bool{}
		for len(idx) < k {
			idx[r.IntN(len(pb.keys))] = true
		}
		pos := make([]int, 0, k)
		for p := range idx {
			pos = append(pos, p)
		}
		slices.Sort(pos) // pb.keys is in (kg, key) order
		for _, p := range pos {
			out[i] = append(out[i], pb.keys[p])
		}
	}
	return out
}

func keyRecord(keys []int64) arrow.Record {
	sch := arrow.NewSchema([]arrow.Field{{Name: "kg", Type: arrow.PrimitiveTypes.Int32}, {Name: "key", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for _, k := range keys {
		b.Field(0).(*array.Int32Builder).Append(benchKG(k))
		b.Field(1).(*array.Int64Builder).Append(k)
	}
	return b.NewRecordBatch()
}

// BenchmarkProbe probes sorted batches of random live keys against a table
// of one file and one spread over several levels with deletion vectors, side
// by side with Pebble answering the same keys with one iterator and a
// SeekGE per key (values copied out). Pebble gets the table's codec and a
// block cache of keyPageCacheBytes, the budget of the table's key-page cache.
// Reported: nanoseconds per key, and the paimon/pebble ratio.
func BenchmarkProbe(b *testing.B) {
	shapes := []struct {
		name   string
		rows   int
		levels []levelSpec
		codec  string
	}{
		{"1M/one-file-none", 1_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "none"},
		{"1M/levels-none", 1_000_000, []levelSpec{{5, 1, 8}, {4, 10, 2}, {2, 50, 1}, {1, 100, 1}}, "none"},
		{"1M/one-file", 1_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "zstd"},
		{"1M/levels", 1_000_000, []levelSpec{{5, 1, 8}, {4, 10, 2}, {2, 50, 1}, {1, 100, 1}}, "zstd"},
		{"1M/one-file-oneframe", 1_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "zstd-oneframe"},
		{"1M/levels-oneframe", 1_000_000, []levelSpec{{5, 1, 8}, {4, 10, 2}, {2, 50, 1}, {1, 100, 1}}, "zstd-oneframe"},
		{"1M/one-file-snappy", 1_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "snappy"},
		{"1M/levels-snappy", 1_000_000, []levelSpec{{5, 1, 8}, {4, 10, 2}, {2, 50, 1}, {1, 100, 1}}, "snappy"},
		{"10M/one-file-none", 10_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "none"},
		{"10M/levels-none", 10_000_000, []levelSpec{{5, 1, 16}, {4, 10, 4}, {2, 50, 2}, {1, 100, 1}}, "none"},
		{"10M/one-file", 10_000_000, []levelSpec{{level: 5, every: 1, files: 1}}, "zstd"},
		{"10M/levels", 10_000_000, []levelSpec{{5, 1, 16}, {4, 10, 4}, {2, 50, 2}, {1, 100, 1}}, "zstd"},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			if sh.rows > 1_000_000 && testing.Short() {
				b.Skip("10M-row setup skipped under -short")
			}
			pb := newProbeBench(b, sh.rows, sh.levels, sh.codec)
			for _, k := range []int{1000, 10000} {
				sets := pb.probeSets(k, 8)
				recs := make([]arrow.Record, len(sets))
				for i, s := range sets {
					recs[i] = keyRecord(s)
					defer recs[i].Release()
				}
				// Both sides report CPU ns per key (the process's CPU clock,
				// robust to neighbours on a shared machine) and wall ns per
				// key; the pebble side also reports paimon/pebble, the ratio
				// of the two CPU figures of this run (and of the wall ones).
				var cpu0 time.Duration
				var paimonNs float64
				perKey := func(b *testing.B) float64 {
					cpu := float64((processCPU() - cpu0).Nanoseconds()) / float64(b.N*k)
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*k), "ns/key")
					b.ReportMetric(cpu, "cpu-ns/key")
					return cpu
				}
				var paimonWall float64
				b.Run(fmt.Sprintf("keys=%d/paimon", k), func(b *testing.B) {
					i := 0
					// first use opens the files and reads their page indexes
					warm, err := pb.view.Probe(recs[len(recs)-1])
					if err != nil {
						b.Fatal(err)
					}
					warm.Release()
					cpu0 = processCPU()
					for b.Loop() {
						rec, err := pb.view.Probe(recs[i%len(recs)])
						if err != nil {
							b.Fatal(err)
						}
						if int(rec.NumRows()) != k {
							b.Fatalf("found %d of %d keys", rec.NumRows(), k)
						}
						rec.Release()
						i++
					}
					paimonNs = perKey(b)
					paimonWall = float64(b.Elapsed().Nanoseconds()) / float64(b.N*k)
				})
				b.Run(fmt.Sprintf("keys=%d/pebble", k), func(b *testing.B) {
					i := 0
					var kb []byte
					vals := make([][]byte, 0, k)
					probe := func(set []int64) {
						it, err := pb.db.NewIter(nil)
						if err != nil {
							b.Fatal(err)
						}
						vals = vals[:0]
						for _, key := range set {
							kb = pebbleKey(kb[:0], key)
							if it.SeekGE(kb) && bytes.Equal(it.Key(), kb) {
								vals = append(vals, bytes.Clone(it.Value()))
							}
						}
						if err := it.Close(); err != nil {
							b.Fatal(err)
						}
						if len(vals) != k {
							b.Fatalf("found %d of %d keys", len(vals), k)
						}
					}
					probe(sets[len(sets)-1]) // as the paimon side, one batch before timing
					m0 := pb.db.Metrics().BlockCache
					cpu0 = processCPU()
					for b.Loop() {
						probe(sets[i%len(sets)])
						i++
					}
					ns := perKey(b)
					// how often Pebble's block cache (decompressed index and
					// data blocks) spared it a read and decompression
					if m := pb.db.Metrics().BlockCache; m.Hits+m.Misses > m0.Hits+m0.Misses {
						b.ReportMetric(100*float64(m.Hits-m0.Hits)/float64(m.Hits-m0.Hits+m.Misses-m0.Misses), "cache-hit%")
					}
					if paimonNs > 0 && ns > 0 {
						b.ReportMetric(paimonNs/ns, "paimon/pebble")
						b.ReportMetric(paimonWall/(float64(b.Elapsed().Nanoseconds())/float64(b.N*k)), "wall-paimon/pebble")
					}
				})
			}
		})
	}
}
