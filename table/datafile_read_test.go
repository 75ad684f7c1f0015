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

// A range read appends the same rows as the record written, for ranges
// that cover whole pages (decoded onto the output), cut pages at either
// end or lie within one page (decoded into scratch and copied), onto an
// output already holding rows, with nulls and of every codec; booleans
// take parquet-go's page reader.
func TestReadRangeWholeAndCutPages(t *testing.T) {
	for _, codec := range []string{"none", "zstd"} {
		s := &Schema{
			Fields: []Field{{ID: 0, Name: "k", Type: BigInt().NotNull()}, {ID: 1, Name: "n", Type: BigInt()},
				{ID: 2, Name: "s", Type: String()}, {ID: 3, Name: "b", Type: Boolean()}, {ID: 4, Name: "i", Type: Int().NotNull()}},
			HighestFieldID: 4, PrimaryKeys: []string{"k"},
			Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true", OptionFileCompression: codec},
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
			if i%5 == 0 || i/256%3 == 1 && i%2 == 0 {
				rb.Field(1).AppendNull()
				rb.Field(2).AppendNull()
				rb.Field(3).AppendNull()
			} else {
				rb.Field(1).(*array.Int64Builder).Append(int64(i) * 3)
				rb.Field(2).(*array.StringBuilder).Append(strings.Repeat("y", i%9) + fmt.Sprint(i))
				rb.Field(3).(*array.BooleanBuilder).Append(i%3 == 0)
			}
			rb.Field(4).(*array.Int32Builder).Append(int32(-i))
			seqs[i] = int64(i)
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		fio := NewLocalFileIO()
		p := filepath.Join(t.TempDir(), "data-0.parquet")
		if _, err := WriteDataFile(fio, p, s, rec, seqs, nil, DataFileOptions{PageRows: 256}); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDataFile(fio, p, s)
		if err != nil {
			t.Fatal(err)
		}
		ranges := [][2]int64{{0, rows}, {256, 768}, {100, 1000}, {300, 310}, {2990, rows}, {0, 1}, {767, 769}}
		r := rand.New(rand.NewPCG(3, 4))
		for range 20 {
			lo := r.Int64N(rows)
			ranges = append(ranges, [2]int64{lo, lo + 1 + r.Int64N(rows-lo)})
		}
		for fi, f := range s.Fields {
			c := d.fieldCols[fi]
			src := rec.Column(fi)
			for _, rg := range ranges {
				got := newColVec(f.Type)
				if err := d.readRange(c, 0, 40, got); err != nil { // rows already there
					t.Fatal(err)
				}
				if err := d.readRange(c, rg[0], rg[1], got); err != nil {
					t.Fatal(err)
				}
				var want []string
				for i := range int64(40) {
					want = append(want, src.ValueStr(int(i)))
				}
				for i := rg[0]; i < rg[1]; i++ {
					want = append(want, src.ValueStr(int(i)))
				}
				if g := vecRows(got); fmt.Sprint(g) != fmt.Sprint(want) {
					t.Fatalf("%s %s rows %v: got %d rows, want %d:\n got %.300v\nwant %.300v", codec, f.Name, rg, len(g), len(want), g, want)
				}
			}
		}
		d.Close()
		rec.Release()
	}
}

// BenchmarkReadChunks times reading 100K bench rows (kg, key, count, sum,
// label) in the 4,096-row chunks merges read them in, into buffers reused
// from chunk to chunk of a pass (a merge's iterator over one file),
// uncompressed and zstd: the process's CPU time per row (cpu-ns/row),
// steadier than wall time on a loaded machine.
func BenchmarkReadChunks(b *testing.B) {
	for _, codec := range []string{"none", "zstd"} {
		b.Run(codec, func(b *testing.B) {
			s := benchSchema(true)
			s.Options[OptionFileCompression] = codec
			const n = 100_000
			rec := benchRecord(s, benchRows(sortedBenchKeys(0, n, 1), 0))
			defer rec.Release()
			seqs := make([]int64, n)
			for i := range seqs {
				seqs[i] = int64(i)
			}
			fio := NewLocalFileIO()
			p := filepath.Join(b.TempDir(), "data-0.parquet")
			if _, err := WriteDataFile(fio, p, s, rec, seqs, nil, DataFileOptions{}); err != nil {
				b.Fatal(err)
			}
			d, err := OpenDataFile(fio, p, s)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for range b.N {
				var c rowChunk
				for lo := int64(0); lo < n; lo += 4096 {
					if err := d.readChunk(lo, min(lo+4096, n), &c); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/row")
		})
	}
}
