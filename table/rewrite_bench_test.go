package table

import (
	"fmt"
	"path"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeKVRange writes keys lo, lo+step, ... (n of them) as one data file.
func writeKVRange(b testing.TB, files *DataBucketFiles, name string, level int32, lo, step int32, n int, seq int64) DataFileMeta {
	sch, err := files.schema.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	seqs := make([]int64, n)
	for i := range n {
		rb.Field(0).(*array.Int32Builder).Append(lo + int32(i)*step)
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("value-%010d", i))
		seqs[i] = seq + int64(i)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	meta, err := WriteDataFile(files.fio, path.Join(files.dir, name), files.schema, rec, seqs, nil, DataFileOptions{Level: level})
	if err != nil {
		b.Fatal(err)
	}
	return meta
}

// BenchmarkBarrierRound measures the barrier round of a deletion-vector
// bucket: a 1000-key level-0 delta upgraded over one max-level file, with
// the lookup marking the superseded rows. The delta's keys are spread over
// the whole key range, so the lookup decodes one key page per key until the
// file has fewer pages than that: compare the two sizes.
func BenchmarkBarrierRound(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("level5=%d", rows), func(b *testing.B) {
			files, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(b.TempDir(), "bucket-0"), kvSchema(), BucketFilesOptions{
				TargetFileSize: 128 << 20, NewFileName: func() string { return "unused.parquet" },
			})
			if err != nil {
				b.Fatal(err)
			}
			base := writeKVRange(b, files, "base.parquet", 5, 0, 1, rows, 0)
			delta := writeKVRange(b, files, "delta.parquet", 0, 0, int32(rows/1000), 1000, int64(rows))
			cmp := NewKeyComparator([]DataType{Int().NotNull()})
			l, err := NewLevels(cmp, []DataFileMeta{base, delta}, 6)
			if err != nil {
				b.Fatal(err)
			}
			o := CompactionOptions{SmallFileSize: 0, DeletionVectors: true}
			unit, ok := o.Universal().PickLevel0(l.NumLevels(), l.SortedRuns())
			if !ok {
				b.Fatal("no pick")
			}
			plan := PlanCompaction(cmp, unit, l, o)
			b.ResetTimer()
			for range b.N {
				res, err := Compact(plan, l, DeletionVectors{}, files)
				if err != nil {
					b.Fatal(err)
				}
				if n := res.DVs[base.FileName].GetCardinality(); n != 1000 {
					b.Fatalf("%d rows superseded, want 1000", n)
				}
			}
		})
	}
}

// BenchmarkMergeRewrite measures a full rewrite of two interleaved
// 100k-row runs into the max level (rows merged per second), without and
// with the key filters of the output files made as they are written.
func BenchmarkMergeRewrite(b *testing.B) {
	for _, filtered := range []bool{false, true} {
		b.Run(fmt.Sprintf("filters=%v", filtered), func(b *testing.B) { benchMergeRewrite(b, filtered) })
	}
}

func benchMergeRewrite(b *testing.B, filtered bool) {
	n := 0
	opts := BucketFilesOptions{
		TargetFileSize: 128 << 20, NewFileName: func() string { n++; return fmt.Sprintf("out-%d.parquet", n) },
	}
	if filtered {
		opts.KeyFilters = NewKeyFilters()
	}
	files, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(b.TempDir(), "bucket-0"), kvSchema(), opts)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 100_000
	even := writeKVRange(b, files, "even.parquet", 4, 0, 2, rows, 0)
	odd := writeKVRange(b, files, "odd.parquet", 5, 1, 2, rows, rows)
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	l, err := NewLevels(cmp, []DataFileMeta{even, odd}, 6)
	if err != nil {
		b.Fatal(err)
	}
	plan := PlanCompaction(cmp, CompactUnit{OutputLevel: 5, Files: l.AllFiles()}, l, CompactionOptions{SmallFileSize: 1 << 40, DeletionVectors: true})
	b.SetBytes(int64(even.FileSize + odd.FileSize))
	b.ResetTimer()
	for range b.N {
		res, err := Compact(plan, l, DeletionVectors{}, files)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range res.Added {
			_ = files.fio.Remove(path.Join(files.dir, f.FileName))
		}
		if filtered {
			opts.KeyFilters.Retain(func(string) bool { return false })
		}
	}
	b.ReportMetric(float64(2*rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// mapStateSchema is shaped like a map store of keyed state: key group, key,
// entry key, a few values of which two are strings, files uncompressed.
func mapStateSchema() *Schema {
	return &Schema{
		Fields: []Field{
			{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "k", Type: BigInt().NotNull()},
			{ID: 2, Name: "e", Type: BigInt().NotNull()}, {ID: 3, Name: "price", Type: BigInt()},
			{ID: 4, Name: "channel", Type: String()}, {ID: 5, Name: "url", Type: String()},
			{ID: 6, Name: "ts", Type: BigInt()},
		},
		HighestFieldID: 6,
		PrimaryKeys:    []string{"kg", "k", "e"},
		Options:        map[string]string{"bucket": "1", "deletion-vectors.enabled": "true", OptionFileCompression: "none"},
	}
}

// writeStateRows writes the keys (kg, k, i) for i in keys as one data file
// of mapStateSchema, with sequence numbers from seq.
func writeStateRows(b testing.TB, files *DataBucketFiles, name string, level int32, keys []int64, seq int64) DataFileMeta {
	sch, err := files.schema.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	seqs := make([]int64, len(keys))
	for i, k := range keys {
		rb.Field(0).(*array.Int32Builder).Append(int32(k >> 20))
		rb.Field(1).(*array.Int64Builder).Append(k >> 4)
		rb.Field(2).(*array.Int64Builder).Append(k)
		rb.Field(3).(*array.Int64Builder).Append(k * 7)
		rb.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("channel-%d", k%13))
		rb.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("https://www.nexmark.com/item.htm?query=%d&channel_id=%d", k, k%1000))
		rb.Field(6).(*array.Int64Builder).Append(1_700_000_000_000 + k)
		seqs[i] = seq + int64(i)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	meta, err := WriteDataFile(files.fio, path.Join(files.dir, name), files.schema, rec, seqs, nil, DataFileOptions{Level: level})
	if err != nil {
		b.Fatal(err)
	}
	return meta
}

// BenchmarkMergeStretches measures a full rewrite of two runs of
// uncompressed keyed-state rows whose keys alternate in stretches of the
// given length (the shape of the state trees' merges: long stretches of one
// input between short ones of the other), with the output's key filters,
// in ns and allocations per row merged.
func BenchmarkMergeStretches(b *testing.B) {
	for _, stretch := range []int{16, 2000} {
		b.Run(fmt.Sprintf("stretch=%d", stretch), func(b *testing.B) { benchMergeStretches(b, stretch) })
	}
}

func benchMergeStretches(b *testing.B, stretch int) {
	n := 0
	opts := BucketFilesOptions{
		TargetFileSize: 128 << 20, NewFileName: func() string { n++; return fmt.Sprintf("out-%d.parquet", n) },
		KeyFilters: NewKeyFilters(),
	}
	files, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(b.TempDir(), "bucket-0"), mapStateSchema(), opts)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 200_000
	var deep, shallow []int64
	for i := range int64(rows) {
		k := i*3 + 1<<20
		if (i/int64(stretch))%2 == 0 {
			deep = append(deep, k)
		} else {
			shallow = append(shallow, k)
		}
	}
	df := writeStateRows(b, files, "deep.parquet", 5, deep, 0)
	sf := writeStateRows(b, files, "shallow.parquet", 1, shallow, rows)
	cmp := NewKeyComparator([]DataType{Int().NotNull(), BigInt().NotNull(), BigInt().NotNull()})
	l, err := NewLevels(cmp, []DataFileMeta{df, sf}, 6)
	if err != nil {
		b.Fatal(err)
	}
	plan := PlanCompaction(cmp, CompactUnit{OutputLevel: 5, Files: l.AllFiles()}, l, CompactionOptions{SmallFileSize: 1 << 40, DeletionVectors: true})
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		res, err := Compact(plan, l, DeletionVectors{}, files)
		if err != nil {
			b.Fatal(err)
		}
		var out int64
		for _, f := range res.Added {
			out += f.RowCount
			_ = files.fio.Remove(path.Join(files.dir, f.FileName))
		}
		if out != rows {
			b.Fatalf("%d rows out, want %d", out, rows)
		}
		opts.KeyFilters.Retain(func(string) bool { return false })
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows*b.N), "ns/row")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
}
