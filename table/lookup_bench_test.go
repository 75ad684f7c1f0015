package table

import (
	"fmt"
	"path"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkLookupLevels times LookupSuperseded the way a barrier round of
// append-mostly state runs it: 100,000 keys spread over the key range of six
// levels (two of them cut into four files), one key in 1,000 present in the
// first level, the rest new everywhere, with key filters and a lookup
// cache. Nearly every key is carried through every level, checked against
// one filter segment per level; a found key stops at its level.
func BenchmarkLookupLevels(b *testing.B) {
	dir := path.Join(b.TempDir(), "bucket-0")
	opts := BucketFilesOptions{
		TargetFileSize: 128 << 20, NewFileName: func() string { return "unused.parquet" },
		LookupCache: NewDataFileCache(NewLocalFileIO(), kvSchema()),
		KeyFilters:  NewKeyFilters(),
	}
	files, err := NewDataBucketFiles(NewLocalFileIO(), dir, kvSchema(), opts)
	if err != nil {
		b.Fatal(err)
	}
	const span = 200_000 // keys are 0..span; files hold even keys
	var metas []DataFileMeta
	seq := int64(0)
	add := func(level int32, pieces int, step int32) {
		per := span / int(step) / pieces
		for p := range pieces {
			lo := int32(p*per) * step
			name := fmt.Sprintf("l%d-%d.parquet", level, p)
			metas = append(metas, writeKVRange(b, files, name, level, lo, step, per, seq))
			seq += int64(per)
		}
	}
	add(1, 1, 2)
	add(2, 4, 4)
	add(3, 1, 6)
	add(4, 1, 8)
	add(5, 4, 2)
	add(6, 1, 2)
	l, err := NewLevels(NewKeyComparator([]DataType{Int().NotNull()}), metas, 7)
	if err != nil {
		b.Fatal(err)
	}
	var keys [][]byte
	present := 0
	for k := int64(0); k < span; k += 2 {
		v := k | 1 // odd: in no file
		if k%2000 == 0 {
			v, present = k, present+1
		}
		keys = append(keys, AppendKeyDatums(nil, []DataType{Int().NotNull()}, []Datum{IntDatum(v)}))
	}
	// The first lookup opens the files and builds their filters.
	if _, err := LookupSuperseded(l, 0, keys, DeletionVectors{}, files); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		found, err := LookupSuperseded(l, 0, keys, DeletionVectors{}, files)
		if err != nil {
			b.Fatal(err)
		}
		if n := found["l1-0.parquet"].GetCardinality(); len(found) != 1 || n != uint64(present) {
			b.Fatalf("found %d rows in %d files, want %d in l1-0.parquet", n, len(found), present)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*len(keys)), "cpu-ns/key")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

// BenchmarkLookupColdPages times DataFile.lookup of keys a key filter let
// pass in vain, the way a barrier round's lookup meets them: one key in
// every third key page of a 300,000-row file, every page cold (the key-page
// cache emptied before each lookup, as when compaction replaced the file).
// Keys are a state table's: a key group changing every 700 rows, so most
// pages span two, then a pair of BIGINTs whose first changes every 3 rows
// (pair), or one BIGINT (bigint).
func BenchmarkLookupColdPages(b *testing.B) {
	for _, pair := range []bool{true, false} {
		name := "bigint"
		if pair {
			name = "pair"
		}
		b.Run(name, func(b *testing.B) {
			fields := []Field{{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "a", Type: BigInt().NotNull()}}
			pk := []string{"kg", "a"}
			if pair {
				fields = append(fields, Field{ID: 2, Name: "b", Type: BigInt().NotNull()})
				pk = append(pk, "b")
			}
			fields = append(fields, Field{ID: 3, Name: "v", Type: BigInt()})
			s := &Schema{Fields: fields, HighestFieldID: 3, PrimaryKeys: pk,
				Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true", OptionFileCompression: "none"}}
			sch, err := s.ArrowSchema()
			if err != nil {
				b.Fatal(err)
			}
			const rows = 300_000
			rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
			seqs := make([]int64, rows)
			key := func(i int, absent bool) []Datum {
				x := int64(0)
				if absent {
					x = 1
				}
				if pair {
					return []Datum{IntDatum(int64(i / 700)), IntDatum(int64(i/3) * 10), IntDatum(int64(i%3)*2 + x)}
				}
				return []Datum{IntDatum(int64(i / 700)), IntDatum(int64(i)*2 + x)}
			}
			for i := range rows {
				for f, d := range key(i, false) {
					if f == 0 {
						rb.Field(0).(*array.Int32Builder).Append(int32(d.Int))
					} else {
						rb.Field(f).(*array.Int64Builder).Append(d.Int)
					}
				}
				rb.Field(len(fields) - 1).(*array.Int64Builder).Append(int64(i))
				seqs[i] = int64(i)
			}
			rec := rb.NewRecordBatch()
			rb.Release()
			fio := NewLocalFileIO()
			p := path.Join(b.TempDir(), "data-0.parquet")
			if _, err := WriteDataFile(fio, p, s, rec, seqs, nil, DataFileOptions{}); err != nil {
				b.Fatal(err)
			}
			rec.Release()
			d, err := OpenDataFile(fio, p, s)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			d.keyCache = newKeyPageCache(keyPageCacheBytes)
			var types []DataType
			for _, f := range fields[:len(pk)] {
				types = append(types, f.Type)
			}
			var keys [][]byte
			var ids []int32
			for i := 500; i < rows; i += 3 * DefaultPageRows {
				keys = append(keys, AppendKeyDatums(nil, types, key(i, true)))
				ids = append(ids, int32(len(ids)))
			}
			var out []probeMatch
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for range b.N {
				d.keyCache.mu.Lock()
				d.keyCache.pages, d.keyCache.used = map[keyPageID]*cachedKeyPage{}, 0
				clear(d.keyCache.missed[:])
				d.keyCache.mu.Unlock()
				if out, err = d.lookup(keys, ids, out[:0]); err != nil || len(out) != 0 {
					b.Fatalf("%d absent keys found, %v", len(out), err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*len(keys)), "cpu-ns/key")
		})
	}
}
