package table

import (
	"fmt"
	"path"
	"testing"
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
