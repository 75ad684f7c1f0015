package table

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// withLegacyWriter runs f with every DataFileWriter on parquet-go's writer.
func withLegacyWriter(f func()) {
	legacyDataFileWriter = true
	defer func() { legacyDataFileWriter = false }()
	f()
}

// The page writer writes the files parquet-go's writer writes, byte for
// byte, for every golden case and codec (zstd too, which the goldens do not
// pin), and the same meta.
func TestDirectWriterMatchesGoldenCases(t *testing.T) {
	for _, codec := range []string{"none", "snappy", "zstd"} {
		direct := goldenDataFileDigests(t, codec)
		var legacy map[string]string
		withLegacyWriter(func() { legacy = goldenDataFileDigests(t, codec) })
		for name, d := range direct {
			if legacy[name] != d {
				t.Errorf("%s/%s: page writer digest %s, parquet-go %s", codec, name, d, legacy[name])
			}
		}
	}
	for _, c := range []struct {
		s      *Schema
		direct bool
	}{
		{stateSchema(), false}, // BOOLEAN, DECIMAL(23), TIMESTAMP(9)
		{goldenWideSchema(), true},
		{benchSchema(true), true},
		{kvSchema(), true},
	} {
		k, err := kitFor(c.s, DataFileOptions{}, pageBufferSize)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.tmpl != nil; got != c.direct {
			t.Errorf("schema of %d fields: page writer %v, want %v", len(c.s.Fields), got, c.direct)
		}
	}
}

// edgeSchema has the types and shapes the golden cases lack: decimals of
// both physical widths, small ints, a column of nulls only, long strings.
func edgeSchema() *Schema {
	return &Schema{
		Fields: []Field{
			{ID: 0, Name: "k", Type: String().NotNull()},
			{ID: 1, Name: "k2", Type: SmallInt().NotNull()},
			{ID: 2, Name: "d9", Type: Decimal(9, 2)},
			{ID: 3, Name: "d18", Type: Decimal(18, 4).NotNull()},
			{ID: 4, Name: "none", Type: BigInt()},
			{ID: 5, Name: "long", Type: String()},
			{ID: 6, Name: "sm", Type: SmallInt()},
			{ID: 7, Name: "e", Type: Bytes()},
		},
		HighestFieldID: 7,
		PrimaryKeys:    []string{"k", "k2"},
		Options:        map[string]string{"bucket": "1"},
	}
}

func edgeRecord(t *testing.T, n int) arrow.Record {
	t.Helper()
	sch, err := edgeSchema().ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%06d", i/2))
		b.Field(1).(*array.Int16Builder).Append(int16(i%2) - 1)
		if i%3 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i*37 - 5000)))
		}
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * -1_000_000_007))
		b.Field(4).AppendNull()
		if i%7 == 1 {
			b.Field(5).AppendNull()
		} else {
			// past 1 MiB a page: Writes ending mid-page cut this column alone
			b.Field(5).(*array.StringBuilder).Append(strings.Repeat(string(rune('a'+i%26)), 1200+i%300))
		}
		b.Field(6).(*array.Int16Builder).Append(int16(i * 13))
		b.Field(7).(*array.BinaryBuilder).Append(nil) // empty, not null
	}
	return b.NewRecordBatch()
}

func TestDirectWriterMatchesParquetGoOnEdges(t *testing.T) {
	const n = 5000
	rec := edgeRecord(t, n)
	defer rec.Release()
	kinds := make([]ValueKind, n)
	for i := range kinds {
		kinds[i] = ValueKind(3 - i%11%4)
	}
	write := func(codec string, writes int) ([]byte, DataFileMeta) {
		fio := newMemFS()
		opts := DataFileOptions{Compression: codec, PageRows: 1000}
		var m DataFileMeta
		var err error
		if writes == 1 {
			m, err = WriteDataFile(fio, "f", edgeSchema(), rec, seqRange(7, n), kinds, opts)
		} else {
			var w *DataFileWriter
			if w, err = NewDataFileWriter(fio, "f", edgeSchema(), opts); err != nil {
				t.Fatal(err)
			}
			step := n / writes // 714 rows
			if writes == 5 {
				step = 990 // each Write ends a page of long strings past 0.98 MiB
			}
			for lo := 0; lo < n && err == nil; lo += step {
				hi := min(n, lo+step)
				part := rec.NewSlice(int64(lo), int64(hi))
				err = w.Write(part, seqRange(7+int64(lo), hi-lo), kinds[lo:hi])
				part.Release()
				if err == nil {
					err = w.endRowGroupPast(int64(writes) << 20)
				}
			}
			if err == nil {
				m, err = w.Close()
			}
		}
		if err != nil {
			t.Fatalf("%s, %d writes: %v", codec, writes, err)
		}
		data, _ := fio.ReadFile("f")
		m.FileName, m.CreationTimeMs = "", nil
		return data, m
	}
	for _, codec := range []string{"none", "snappy", "zstd"} {
		for _, writes := range []int{1, 5, 7} {
			got, gotMeta := write(codec, writes)
			var want []byte
			var wantMeta DataFileMeta
			withLegacyWriter(func() { want, wantMeta = write(codec, writes) })
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d writes: page writer wrote %d bytes, parquet-go %d, first difference at %d",
					codec, writes, len(got), len(want), firstDiff(got, want))
			}
			if !bytes.Equal(got, want) {
				t.Logf("footers differ:\n%s", footerDiff(t, got, want))
			}
			if writes == 5 && codec == "none" {
				// column 2+2+5 is "long": a Write ending past 0.98 MiB of it
				// cut its page there, and the keys' pages not
				if keys, long := pageCount(t, got, 0), pageCount(t, got, 9); long <= keys {
					t.Errorf("long strings: %d pages, keys %d: no page cut at a Write's end", long, keys)
				}
			}
			if !reflect.DeepEqual(gotMeta, wantMeta) {
				t.Errorf("%s, %d writes: metas differ", codec, writes)
			}
		}
	}
}

func pageCount(t *testing.T, data []byte, col int) int {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rg := range f.RowGroups() {
		oi, err := rg.ColumnChunks()[col].OffsetIndex()
		if err != nil {
			t.Fatal(err)
		}
		n += oi.NumPages()
	}
	return n
}

func footerDiff(t *testing.T, a, b []byte) string {
	show := func(data []byte) string {
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%+v\n%+v\n%+v", f.ColumnIndexes(), f.OffsetIndexes(), *f.Metadata())
	}
	x, y := show(a), show(b)
	i := firstDiff([]byte(x), []byte(y))
	return fmt.Sprintf("page writer ...%s\nparquet-go ...%s", x[max(0, i-300):min(len(x), i+200)], y[max(0, i-300):min(len(y), i+200)])
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestDataPageHeaderMatchesThrift(t *testing.T) {
	var buf bytes.Buffer
	var proto thrift.CompactProtocol
	enc := thrift.NewEncoder(proto.NewWriter(&buf))
	for i, c := range []struct {
		crc        int32
		minB, maxB []byte
		nulls      int64
	}{
		{crc: -5, minB: []byte{1, 2}, maxB: []byte{3}, nulls: 0},
		{crc: 0, minB: []byte{}, maxB: []byte{}, nulls: 7},
		{crc: 1 << 30, minB: nil, maxB: nil, nulls: 1 << 40},
		{crc: -1 << 31, minB: bytes.Repeat([]byte{9}, 300), maxB: bytes.Repeat([]byte{8}, 128), nulls: 3},
	} {
		for _, e := range []format.Encoding{format.Plain, format.RLEDictionary} {
			var h format.PageHeader
			h.Type = format.DataPage
			h.UncompressedPageSize, h.CompressedPageSize, h.CRC = int32(i*1000+1), int32(i*77), c.crc
			h.DataPageHeader.Valid = true
			h.DataPageHeader.V = format.DataPageHeader{
				NumValues: int32(i * 1024), Encoding: e, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
				Statistics: format.Statistics{Min: c.minB, Max: c.maxB, NullCount: c.nulls, MinValue: c.minB, MaxValue: c.maxB},
			}
			buf.Reset()
			if err := enc.Encode(&h); err != nil {
				t.Fatal(err)
			}
			got := appendDataPageHeader(nil, h.UncompressedPageSize, h.CompressedPageSize, c.crc, h.DataPageHeader.V.NumValues, e, c.minB, c.maxB, c.nulls)
			if !bytes.Equal(got, buf.Bytes()) {
				t.Errorf("case %d, %v:\n got %x\nwant %x", i, e, got, buf.Bytes())
			}
		}
	}
}
