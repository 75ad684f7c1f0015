package table

import (
	"fmt"
	"path"
	"runtime"
	"syscall"
	"testing"
)

// BenchmarkLookupFresh times LookupSuperseded of 20,000 keys that no level
// holds (the delta of append-only state) over levels 1-3 of 100K, 300K and
// 1M rows spread over the same key range, with the files open in a lookup
// cache: without key filters every key is searched in one key page per
// level; with them a key reaches a file only when its filter lets it pass.
func BenchmarkLookupFresh(b *testing.B) {
	for _, filtered := range []bool{false, true} {
		b.Run(fmt.Sprintf("filters=%v", filtered), func(b *testing.B) {
			dir := path.Join(b.TempDir(), "bucket-0")
			opts := BucketFilesOptions{
				TargetFileSize: 128 << 20, NewFileName: func() string { return "unused.parquet" },
				LookupCache: NewDataFileCache(NewLocalFileIO(), kvSchema()),
			}
			if filtered {
				opts.KeyFilters = NewKeyFilters()
			}
			files, err := NewDataBucketFiles(NewLocalFileIO(), dir, kvSchema(), opts)
			if err != nil {
				b.Fatal(err)
			}
			const span = 2_000_000
			metas := []DataFileMeta{
				writeKVRange(b, files, "l1.parquet", 1, 0, span/100_000, 100_000, 2_000_000),
				writeKVRange(b, files, "l2.parquet", 2, 0, span/300_000, 300_000, 1_000_000),
				writeKVRange(b, files, "l3.parquet", 3, 0, 2, span/2, 0),
			}
			l, err := NewLevels(NewKeyComparator([]DataType{Int().NotNull()}), metas, 4)
			if err != nil {
				b.Fatal(err)
			}
			var keys [][]byte
			for k := int32(1); k < span; k += span / 20_000 {
				keys = append(keys, AppendKeyDatums(nil, []DataType{Int().NotNull()}, []Datum{IntDatum(int64(k | 1))}))
			}
			// The first lookup opens the files (and builds their filters).
			if _, err := LookupSuperseded(l, 0, keys, DeletionVectors{}, files); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				found, err := LookupSuperseded(l, 0, keys, DeletionVectors{}, files)
				if err != nil {
					b.Fatal(err)
				}
				if len(found) != 0 {
					b.Fatalf("absent keys found: %v", found)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
	}
}

// BenchmarkKeyFilter times building the filter of a file of 64K keys (as a
// compaction writer or a round's key read makes it) and checking ascending
// keys against it, each of them absent (the delta of append-only state): as
// many keys as the file holds and a hundredth of that. Keys are 24-byte
// state keys (key group, id, row id), as q20's join sides have.
func BenchmarkKeyFilter(b *testing.B) {
	const rows = 64 << 10
	key := func(i int64) []byte {
		return AppendKeyDatums(nil, []DataType{Int().NotNull(), BigInt().NotNull(), BigInt().NotNull()},
			[]Datum{IntDatum(int64(i / 4096)), IntDatum(i * 7), IntDatum(i)})
	}
	held := make([][]byte, rows)
	for i := range held {
		held[i] = key(2 * int64(i))
	}
	b.Run("build", func(b *testing.B) {
		var kb keyFilterBuilder
		defer reportThreadCPU(b, rows)()
		for range b.N {
			for _, k := range held {
				kb.add(k)
			}
			if _, err := kb.finish(DataFileMeta{RowCount: rows, FileSize: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	var kb keyFilterBuilder
	for _, k := range held {
		kb.add(k)
	}
	flt, err := kb.finish(DataFileMeta{RowCount: rows, FileSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, every := range []int64{1, 100} {
		var absent [][]byte
		for i := int64(0); i < rows; i += every {
			absent = append(absent, key(2*i+1))
		}
		hashes := hashesOf(absent)
		b.Run(fmt.Sprintf("check/keys=%d", len(absent)), func(b *testing.B) {
			var out []int32
			done := reportThreadCPU(b, len(absent))
			for range b.N {
				out = flt.mayHold(absent, hashes, out[:0])
			}
			done()
			b.ReportMetric(float64(len(out))/float64(len(absent)), "passed/key")
		})
	}
}

// reportThreadCPU starts counting the CPU time of the benchmark's thread; the
// function it returns reports it per item (cpu-ns/key) of each iteration's
// perItem. The machine may be shared: its CPU time, unlike the wall clock,
// leaves out the time other processes ran.
func reportThreadCPU(b *testing.B, perItem int) func() {
	runtime.LockOSThread()
	start := threadCPU(b)
	return func() {
		used := threadCPU(b) - start
		runtime.UnlockOSThread()
		b.ReportMetric(float64(used)/float64(b.N*perItem), "cpu-ns/key")
	}
}

func threadCPU(b *testing.B) int64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Skip("no thread CPU time:", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
