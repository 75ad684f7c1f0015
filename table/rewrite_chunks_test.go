package table

import (
	"bytes"
	"fmt"
	"path"
	"reflect"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeKVNulls writes keys ks (ascending) as one data file; a key divisible
// by 7 gets a null value.
func writeKVNulls(t *testing.T, b *DataBucketFiles, name string, level int32, ks []int32, seq int64) DataFileMeta {
	t.Helper()
	sch, err := b.schema.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	seqs := make([]int64, len(ks))
	for i, k := range ks {
		rb.Field(0).(*array.Int32Builder).Append(k)
		if k%7 == 0 {
			rb.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%s-%d", name, k))
		}
		seqs[i] = seq + int64(i)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	meta, err := WriteDataFile(b.fio, path.Join(b.dir, name), b.schema, rec, seqs, nil, DataFileOptions{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// A merge of runs spanning several read chunks, with long stretches from
// one run, interleaved stretches, nulls and a deletion vector across a
// chunk boundary, writes every surviving row once with its newest value:
// rows a writer holds back survive the reuse of their chunk's buffers.
func TestCompactMergesAcrossChunks(t *testing.T) {
	b := newKVBucket(t, 1<<30)
	var old, young []int32
	for k := range int32(3 * bucketFilesChunkRows) {
		old = append(old, k)
		if k%3 == 0 && (k < bucketFilesChunkRows || k > 2*bucketFilesChunkRows) {
			young = append(young, k)
		}
	}
	deep := writeKVNulls(t, b, "deep.parquet", 5, old, 0)
	top := writeKVNulls(t, b, "top.parquet", 4, young, int64(len(old)))
	dv := roaring.New()
	dv.AddRange(bucketFilesChunkRows-100, bucketFilesChunkRows+100)
	dvs := DeletionVectors{deep.FileName: dv}
	want := map[int32]string{} // non-null values
	live := map[int32]bool{}
	for _, k := range old {
		if !dv.Contains(uint32(k)) {
			live[k] = true
			if k%7 != 0 {
				want[k] = fmt.Sprintf("deep.parquet-%d", k)
			}
		}
	}
	for _, k := range young {
		live[k] = true
		delete(want, k)
		if k%7 != 0 {
			want[k] = fmt.Sprintf("top.parquet-%d", k)
		}
	}
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	l, err := NewLevels(cmp, []DataFileMeta{deep, top}, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(cmp, CompactUnit{OutputLevel: 5, Files: l.AllFiles()}, l, CompactionOptions{SmallFileSize: 1 << 40, DeletionVectors: true})
	res, err := Compact(plan, l, dvs, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(res.Deleted, res.Added); err != nil {
		t.Fatal(err)
	}
	if err := CheckBucket(l, res.DVs, b); err != nil {
		t.Fatal(err)
	}
	got := readVisible(t, b, l, res.DVs)
	rows := 0
	for _, f := range res.Added {
		rows += int(f.RowCount)
	}
	if rows != len(live) {
		t.Fatalf("wrote %d rows, want %d", rows, len(live))
	}
	for k, v := range got {
		if v == "" {
			delete(got, k) // null
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %d non-null rows back, want %d", len(got), len(want))
	}
}

// ReadKeys yields the keys Open yields, deletion vectors applied, with and
// without a lookup cache.
func TestReadKeysMatchesOpen(t *testing.T) {
	b := newKVBucket(t, 1<<30)
	var ks []int32
	for k := range int32(2*bucketFilesChunkRows + 17) {
		ks = append(ks, 3*k-5000)
	}
	f := writeKVNulls(t, b, "data.parquet", 0, ks, 0)
	dv := roaring.New()
	dv.AddMany([]uint32{0, 5, bucketFilesChunkRows - 1, bucketFilesChunkRows, uint32(len(ks) - 1)})
	it, err := b.Open(f, dv)
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for it.Next() {
		want = append(want, bytes.Clone(it.Key()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if len(want) != len(ks)-5 {
		t.Fatalf("Open yields %d keys, want %d", len(want), len(ks)-5)
	}
	cached := *b
	cached.opts.LookupCache = NewDataFileCache(b.fio, b.schema)
	defer cached.opts.LookupCache.Close()
	for _, files := range []*DataBucketFiles{b, &cached} {
		var got [][]byte
		if err := files.ReadKeys(f, dv, func(k []byte) { got = append(got, bytes.Clone(k)) }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadKeys yields %d keys, Open %d (cache %v)", len(got), len(want), files.opts.LookupCache != nil)
		}
	}
}
