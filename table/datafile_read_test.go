package table

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowStrings renders every row of a record as "v0|v1|..." for comparisons.
func rowStrings(rec arrow.Record) []string {
	out := make([]string, rec.NumRows())
	for i := range out {
		var parts []string
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(i) {
				parts = append(parts, "NULL")
				continue
			}
			switch a := col.(type) {
			case *array.Float64:
				parts = append(parts, fmt.Sprint(a.Value(i)))
			default:
				parts = append(parts, col.ValueStr(i))
			}
		}
		out[i] = strings.Join(parts, "|")
	}
	return out
}

func TestReadJavaWrittenDataFile(t *testing.T) {
	dir := fixtureDir(t, "pk-dv-parquet")
	path := filepath.Join(dir, "f1=10", "bucket-1", "data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet")
	d, err := OpenDataFile(NewLocalFileIO(), path, fixturePKSchema(true))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, err := d.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Release()
	got := rowStrings(fr.Rows)
	want := []string{"Alex|10|0|16.1", "Bob|10|0|12.1", "David|10|0|17.1", "Emily|10|0|13.1", "Tony|10|0|14.1"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %v want %v", got, want)
	}
	// Java assigned sequence numbers 0..4 in insertion order.
	if fmt.Sprint(fr.Seqs) != "[3 0 4 1 2]" || fmt.Sprint(fr.Kinds) != "[0 0 0 0 0]" {
		t.Errorf("seqs %v kinds %v", fr.Seqs, fr.Kinds)
	}
	sub, err := d.ReadRange(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Release()
	if got := rowStrings(sub.Rows); strings.Join(got, ",") != "Bob|10|0|12.1,David|10|0|17.1" {
		t.Fatalf("range rows %v", got)
	}
}

// Sparse reads of uncompressed pages read a prefix of each page and fall
// back to the whole page when the rows lie beyond it (nulls before them,
// longer strings than the page's average): every row reads the same as in
// a whole-page read.
func TestReadRowsFromPagePrefixes(t *testing.T) {
	s := &Schema{
		Fields: []Field{{ID: 0, Name: "k", Type: BigInt().NotNull()}, {ID: 1, Name: "n", Type: BigInt()},
			{ID: 2, Name: "d", Type: Double()}, {ID: 3, Name: "s", Type: String()}, {ID: 4, Name: "i", Type: Int().NotNull()}},
		HighestFieldID: 4, PrimaryKeys: []string{"k"},
		Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true", OptionFileCompression: "none"},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	const rows = 3000
	seqs := make([]int64, rows)
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		// nulls cluster in the first half of some pages
		if i%256 < 100 && i/256%2 == 1 || i%7 == 0 {
			rb.Field(1).AppendNull()
			rb.Field(2).AppendNull()
			rb.Field(3).AppendNull()
		} else {
			rb.Field(1).(*array.Int64Builder).Append(int64(i) * 3)
			rb.Field(2).(*array.Float64Builder).Append(float64(i) / 7)
			rb.Field(3).(*array.StringBuilder).Append(strings.Repeat("x", i%256/4) + fmt.Sprint(i))
		}
		rb.Field(4).(*array.Int32Builder).Append(int32(-i))
		seqs[i] = int64(i)
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	defer rec.Release()
	fio := NewLocalFileIO()
	p := filepath.Join(t.TempDir(), "data-0.parquet")
	if _, err := WriteDataFile(fio, p, s, rec, seqs, nil, DataFileOptions{PageRows: 256}); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDataFile(fio, p, s)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for fi, f := range s.Fields {
		c := d.fieldCols[fi]
		whole := newColVec(f.Type)
		if err := d.readRange(c, 0, rows, whole); err != nil {
			t.Fatal(err)
		}
		for round := range 50 {
			var pos []int64
			for i := int64(r.IntN(300)); i < rows; i += 1 + int64(r.IntN(600)) {
				pos = append(pos, i)
			}
			if round == 0 {
				pos = []int64{255, 256 + 255, rows - 1} // the last row of pages
			}
			got := newColVec(f.Type)
			if err := d.readRows(c, pos, got); err != nil {
				t.Fatal(err)
			}
			want := newColVec(f.Type)
			for _, x := range pos {
				want.appendRow(whole, int(x))
			}
			if fmt.Sprint(vecRows(got)) != fmt.Sprint(vecRows(want)) {
				t.Fatalf("%s rows %v:\n got %v\nwant %v", f.Name, pos, vecRows(got), vecRows(want))
			}
		}
	}
}

// vecRows renders a vector's rows.
func vecRows(v *colVec) []string {
	a, err := v.arrow()
	if err != nil {
		return []string{err.Error()}
	}
	defer a.Release()
	out := make([]string, a.Len())
	for i := range out {
		out[i] = a.ValueStr(i)
	}
	return out
}
