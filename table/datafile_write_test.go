package table

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// stateSchema is a time-ordered state table: PK [kg, key, ts], a few values.
func stateSchema() *Schema {
	return &Schema{
		ID: 0,
		Fields: []Field{
			{ID: 0, Name: "kg", Type: Int().NotNull()},
			{ID: 1, Name: "key", Type: String().NotNull()},
			{ID: 2, Name: "ts", Type: BigInt().NotNull()},
			{ID: 3, Name: "v_str", Type: String()},
			{ID: 4, Name: "v_dec", Type: Decimal(23, 5)},
			{ID: 5, Name: "v_ts", Type: Timestamp(9)},
			{ID: 6, Name: "v_bool", Type: Boolean()},
			{ID: 7, Name: "v_small", Type: SmallInt()},
			{ID: 8, Name: "v_date", Type: Date()},
			{ID: 9, Name: "v_ts3", Type: Timestamp(3)},
		},
		HighestFieldID: 9,
		PrimaryKeys:    []string{"kg", "key", "ts"},
		Options:        map[string]string{"bucket": "1"},
	}
}

func buildStateRecord(t testing.TB, s *Schema, n int) arrow.Record {
	is := make([]int, n)
	for i := range is {
		is[i] = i
	}
	return buildStateRows(t, s, is, 0)
}

// buildStateRows builds the rows i of is (ascending): key (i/100,
// "k%03d" of i%100/10, i%10); v_small is -i, or small when small != 0.
func buildStateRows(t testing.TB, s *Schema, is []int, small int16) arrow.Record {
	t.Helper()
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for _, i := range is {
		b.Field(0).(*array.Int32Builder).Append(int32(i / 100))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("k%03d", i%100/10))
		b.Field(2).(*array.Int64Builder).Append(int64(i % 10))
		if i%7 == 0 {
			for c := 3; c < len(s.Fields); c++ {
				b.Field(c).AppendNull()
			}
			continue
		}
		b.Field(3).(*array.StringBuilder).Append(strings.Repeat("value-", i%5))
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * -123456789))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i)*1_000_000_007 - 5e18))
		b.Field(6).(*array.BooleanBuilder).Append(i%2 == 0)
		if small != 0 {
			b.Field(7).(*array.Int16Builder).Append(small)
		} else {
			b.Field(7).(*array.Int16Builder).Append(int16(-i))
		}
		b.Field(8).(*array.Date32Builder).Append(arrow.Date32(i - 500))
		b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1000))
	}
	return b.NewRecordBatch()
}

func seqRange(from int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = from + int64(i)
	}
	return s
}

func TestDataFileRoundTrip(t *testing.T) {
	s := stateSchema()
	rec := buildStateRecord(t, s, 2500)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "bucket-0", "data-x-0.parquet")
	kinds := make([]ValueKind, rec.NumRows())
	kinds[5] = KindDelete
	meta, err := WriteDataFile(NewLocalFileIO(), path, s, rec, seqRange(100, int(rec.NumRows())), kinds, DataFileOptions{PageRows: 300})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta.FileSize != st.Size() || meta.RowCount != 2500 || meta.MinSequenceNumber != 100 || meta.MaxSequenceNumber != 2599 ||
		*meta.DeleteRowCount != 1 || meta.FileName != "data-x-0.parquet" || *meta.FileSource != SourceAppend || meta.ValueStatsCols != nil {
		t.Fatalf("meta %+v (size on disk %d)", meta, st.Size())
	}
	keyTypes := []DataType{Int().NotNull(), String().NotNull(), BigInt().NotNull()}
	minKey, _ := DecodeBinaryRow(meta.MinKey, keyTypes)
	maxKey, _ := DecodeBinaryRow(meta.MaxKey, keyTypes)
	if minKey[0].Int != 0 || string(minKey[1].Bytes) != "k000" || maxKey[0].Int != 24 || string(maxKey[1].Bytes) != "k009" || maxKey[2].Int != 9 {
		t.Fatalf("min key %v max key %v", minKey, maxKey)
	}
	vmin, err := DecodeBinaryRow(meta.ValueStats.MinValues, nullableTypes(s))
	if err != nil {
		t.Fatal(err)
	}
	vmax, _ := DecodeBinaryRow(meta.ValueStats.MaxValues, nullableTypes(s))
	if vmin[0].Int != 0 || vmax[0].Int != 24 || vmin[7].Int != -2498 || vmax[7].Int != -1 || *meta.ValueStats.NullCounts[3] != 358 {
		t.Fatalf("value stats min %v max %v", vmin, vmax)
	}

	d, err := OpenDataFile(NewLocalFileIO(), path, s)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, err := d.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Release()
	want, got := rowStrings(rec), rowStrings(fr.Rows)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("row %d: got %s want %s", i, got[i], want[i])
		}
	}
	if fr.Seqs[2499] != 2599 || fr.Kinds[5] != KindDelete {
		t.Fatalf("seq/kind not read back")
	}
	checkParquetLayout(t, path, s)
}

// checkParquetLayout asserts what Paimon readers rely on: column names and
// order, field ids, repetition, Data Page V1 and only PLAIN, dictionary and
// RLE encodings (no DELTA_*, no BYTE_STREAM_SPLIT).
func checkParquetLayout(t *testing.T, path string, s *Schema) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	var names []string
	for _, e := range md.Schema[1:] {
		names = append(names, e.Name)
	}
	want := "_KEY_kg,_KEY_key,_KEY_ts,_SEQUENCE_NUMBER,_VALUE_KIND,kg,key,ts,v_str,v_dec,v_ts,v_bool,v_small,v_date,v_ts3"
	if strings.Join(names, ",") != want || md.Schema[0].Name != "paimon_schema" {
		t.Fatalf("columns %v", names)
	}
	ids := map[string]int32{"_KEY_kg": 1073741823, "_KEY_ts": 1073741825, "_SEQUENCE_NUMBER": 2147483646, "_VALUE_KIND": 2147483645, "v_ts3": 9}
	for _, e := range md.Schema[1:] {
		if id, ok := ids[e.Name]; ok && e.FieldID != id {
			t.Errorf("%s field id %d want %d", e.Name, e.FieldID, id)
		}
		rep, _ := e.RepetitionType.Get()
		optional := rep == format.Optional
		if strings.HasPrefix(e.Name, "v_") != optional {
			t.Errorf("%s optional=%v", e.Name, optional)
		}
	}
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			for _, enc := range c.MetaData.Encoding {
				switch enc {
				case format.Plain, format.RLE, format.BitPacked, format.PlainDictionary, format.RLEDictionary:
				default:
					t.Errorf("column %v uses encoding %s", c.MetaData.PathInSchema, enc)
				}
			}
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v codec %s", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
			for _, es := range c.MetaData.EncodingStats {
				if es.PageType == format.DataPageV2 {
					t.Errorf("column %v has v2 data pages", c.MetaData.PathInSchema)
				}
			}
		}
	}
	if len(pf.ColumnIndexes()) == 0 || len(pf.OffsetIndexes()) == 0 {
		t.Errorf("no page index")
	}
}

func nullableTypes(s *Schema) []DataType {
	out := make([]DataType, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Type
		out[i].Nullable = true
	}
	return out
}

func TestDataFileWriterRejectsUnsortedKeys(t *testing.T) {
	s := stateSchema()
	rec := buildStateRecord(t, s, 20)
	defer rec.Release()
	dir := t.TempDir()
	w, err := NewDataFileWriter(NewLocalFileIO(), filepath.Join(dir, "a.parquet"), s, DataFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec, seqRange(0, 20), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec, seqRange(20, 20), nil); err == nil || !strings.Contains(err.Error(), "not strictly ascending") {
		t.Fatalf("second write of the same keys: %v", err)
	}
	w.Abort()
	if _, err := os.Stat(filepath.Join(dir, "a.parquet")); !os.IsNotExist(err) {
		t.Fatalf("aborted file left behind: %v", err)
	}
}
