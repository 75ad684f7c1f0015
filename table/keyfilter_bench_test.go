package table

import (
	"fmt"
	"path"
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
