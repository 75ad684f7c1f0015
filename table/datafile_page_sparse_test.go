package table

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// laidOutFile writes the state schema's rows in 300-row pages with nulls in
// the first page only.
func laidOutFile(t *testing.T, codec string) *DataFile {
	t.Helper()
	s := stateSchema()
	var is []int
	for i := range 2500 {
		if i < 300 || i%7 != 0 { // buildStateRows makes rows i%7 == 0 null
			is = append(is, i)
		}
	}
	rec := buildStateRows(t, s, is, 0)
	defer rec.Release()
	fio := newMemFS()
	if _, err := WriteDataFile(fio, "bucket-0/f.parquet", s, rec, seqRange(0, len(is)), nil,
		testPageOptions(codec)); err != nil {
		t.Fatal(err)
	}
	b, err := fio.ReadFile("bucket-0/f.parquet")
	if err != nil {
		t.Fatal(err)
	}
	d, err := openMem(b, "bucket-0/f.parquet", s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Sparse reads by a page's layout give the rows that whole-page decoding
// gives, for every type the page decoder reads (ints, strings, decimals,
// timestamps, dates), across layout marks and at the page's ends, in pages
// with and without nulls, uncompressed and zstd (one frame per page, or
// frames a read decompresses only those of); dictionary pages have no
// layout and keep the general path.
func TestSparseRowsMatchWholePages(t *testing.T) {
	for _, codec := range []string{"none", "zstd", "zstd-frames", "none-nulls", "zstd-frames-nulls"} {
		var d *DataFile
		if codec, ok := strings.CutSuffix(codec, "-nulls"); ok { // a null every 7 rows in every page
			fio, p := writtenStateFile(t, codec)
			b, err := fio.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if d, err = openMem(b, p, stateSchema()); err != nil {
				t.Fatal(err)
			}
		} else {
			d = laidOutFile(t, codec)
		}
		g := &d.groups[0]
		laidOut := 0
		for c := range d.leaves {
			if !d.fastPages(g, c) {
				continue
			}
			ty := columnType(d, c)
			for p, s := range g.pages[c] {
				whole := newColVec(ty)
				if err := d.decodePage(g, c, s, whole, new(pageScratch)); err != nil {
					t.Fatal(err)
				}
				rows := int32(whole.n)
				sels := [][]int32{{0}, {rows - 1}, {layoutMark - 1, layoutMark}, {framedMark - 1, framedMark}, {framedMark + 1, 3*framedMark - 1}, {1, layoutMark + 3, 2*layoutMark + 1, rows - 2}, {rows / 2}, {7}, {7, 14}, {6, 7, 8}}
				for round := range 2 { // the first read learns the layout
					for _, sel := range sels {
						if !slices.IsSorted(sel) || sel[0] < 0 || sel[len(sel)-1] >= rows {
							continue // a short last page
						}
						got, want := newColVec(ty), newColVec(ty)
						if err := d.decodePageRows(g, c, p, sel, got, new(pageScratch)); err != nil {
							t.Fatalf("%s column %d page %d rows %v: %v", codec, c, p, sel, err)
						}
						want.gather(whole, sel)
						if !sameVec(got, want) {
							t.Fatalf("%s column %d page %d round %d rows %v:\n%+v\n%+v", codec, c, p, round, sel, got, want)
						}
					}
				}
				hasLayout := false
				if pages := g.layouts[c].pages; pages != nil {
					lay := pages[p].Load()
					hasLayout = lay != nil && lay != noLayout
				}
				if want := d.chunkMeta(g, c).DictionaryPageOffset <= 0; hasLayout != want {
					t.Errorf("%s column %d page %d: layout %v, want %v", codec, c, p, hasLayout, want)
				}
				if hasLayout {
					laidOut++
				}
			}
		}
		if laidOut == 0 {
			t.Fatal("no page got a layout")
		}
	}
}

// A sparse read by layout reads the bytes of the wanted rows, not the page,
// in pages with and without nulls; of a zstd page in frames, the frames
// that hold them.
func TestSparseRowsReadOnlyTheirBytes(t *testing.T) {
	for _, codec := range []string{"none", "zstd-frames"} {
		fio, p := writtenStateFile(t, codec)
		b, err := fio.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		withNulls, err := openMem(b, p, stateSchema())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []*DataFile{laidOutFile(t, codec), withNulls} {
			sparseReadBytes(t, d, codec == "zstd-frames")
		}
	}
}

func sparseReadBytes(t *testing.T, d *DataFile, zstd bool) {
	g := &d.groups[0]
	counted := &countingReader{ReadableFile: d.f}
	d.f = counted
	for _, name := range []string{"v_dec", "v_str"} {
		c := d.fieldCols[d.schema.FieldIndex(name)]
		s := g.pages[c][1]
		v := newColVec(columnType(d, c))
		counted.bytes = 0
		if err := d.decodePageRows(g, c, 1, []int32{200}, v, new(pageScratch)); err != nil { // learns
			t.Fatal(err)
		}
		if fixed := d.leaves[c].fixedWidth() > 0; fixed && !zstd && counted.bytes >= s.size/2 {
			t.Errorf("%s: learning the layout read %d bytes of a %d-byte page", name, counted.bytes, s.size)
		}
		counted.bytes = 0
		if err := d.decodePageRows(g, c, 1, []int32{200}, v, new(pageScratch)); err != nil {
			t.Fatal(err)
		}
		if lay := g.layouts[c].pages[1].Load(); zstd && (lay.frames == nil || len(lay.frames.comp) < 3) {
			t.Errorf("%s: a zstd page of %d bytes has frames %+v", name, s.size, lay.frames)
		}
		if counted.bytes >= s.size/2 || !zstd && counted.bytes >= s.size/4 {
			t.Errorf("%s: read %d bytes of a %d-byte page for one row", name, counted.bytes, s.size)
		}
		if v.n != 2 || !bytes.Equal(v.data[:len(v.data)/2], v.data[len(v.data)/2:]) || !bytes.Equal(v.fixed[:len(v.fixed)/2], v.fixed[len(v.fixed)/2:]) {
			t.Errorf("%s: the learning read and the sparse read differ: %+v", name, v)
		}
	}
}

type countingReader struct {
	ReadableFile
	bytes int64
}

func (r *countingReader) ReadAt(b []byte, off int64) (int, error) {
	r.bytes += int64(len(b))
	return r.ReadableFile.ReadAt(b, off)
}

// Rows of one framed zstd page far apart are each read from their own
// frames, not from every frame between them, and read as alone.
func TestSparseRowsApartReadOnlyTheirFrames(t *testing.T) {
	d := laidOutFile(t, "zstd-frames")
	g := &d.groups[0]
	counted := &countingReader{ReadableFile: d.f}
	d.f = counted
	for _, name := range []string{"v_dec", "v_str"} {
		c := d.fieldCols[d.schema.FieldIndex(name)]
		s := g.pages[c][1]
		sel := []int32{1, int32(s.end-s.first) - 2}
		alone := newColVec(columnType(d, c))
		for _, r := range sel { // the first read learns the layout
			if err := d.decodePageRows(g, c, 1, []int32{r}, alone, new(pageScratch)); err != nil {
				t.Fatal(err)
			}
		}
		if lay := g.layouts[c].pages[1].Load(); lay.frames == nil || len(lay.frames.comp) < 6 {
			t.Fatalf("%s: a zstd page of %d bytes has frames %+v, want 5 or more", name, s.size, lay.frames)
		}
		both := newColVec(columnType(d, c))
		counted.bytes = 0
		if err := d.decodePageRows(g, c, 1, sel, both, new(pageScratch)); err != nil {
			t.Fatal(err)
		}
		if counted.bytes >= s.size/2 {
			t.Errorf("%s: read %d bytes of a %d-byte page for its second and second-last rows", name, counted.bytes, s.size)
		}
		if both.n != 2 || !bytes.Equal(both.data, alone.data) || !bytes.Equal(both.fixed, alone.fixed) || !bytes.Equal(both.valid, alone.valid) {
			t.Errorf("%s: rows read together %+v, alone %+v", name, both, alone)
		}
	}
}

// Of a zstd page of strings in frames, each row read alone matches the
// whole page's, and a string that lies within one frame reads that frame
// only, not the one before where its layout mark lies there; a string
// straddling two frames reads both.
func TestSparseStringWithinAFrameReadsThatFrame(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		var d *DataFile
		if nulls {
			fio, p := writtenStateFile(t, "zstd-frames")
			b, err := fio.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if d, err = openMem(b, p, stateSchema()); err != nil {
				t.Fatal(err)
			}
		} else {
			d = laidOutFile(t, "zstd-frames")
		}
		g := &d.groups[0]
		counted := &countingReader{ReadableFile: d.f}
		d.f = counted
		c := d.fieldCols[d.schema.FieldIndex("v_str")]
		for p, s := range g.pages[c] {
			whole := newColVec(columnType(d, c))
			if err := d.decodePage(g, c, s, whole, new(pageScratch)); err != nil {
				t.Fatal(err)
			}
			rows := int32(whole.n)
			if err := d.decodePageRows(g, c, p, []int32{0}, newColVec(columnType(d, c)), new(pageScratch)); err != nil { // learns
				t.Fatal(err)
			}
			lay := g.layouts[c].pages[p].Load()
			if lay == noLayout || lay.frames == nil || len(lay.frames.comp) < 4 {
				t.Fatalf("nulls %v page %d: layout %+v, want frames", nulls, p, lay)
			}
			fr := lay.frames
			within, straddling := 0, 0
			at := lay.values // where the next value starts in the page's body
			for r := range rows {
				got, want := newColVec(columnType(d, c)), newColVec(columnType(d, c))
				counted.bytes = 0
				if err := d.decodePageRows(g, c, p, []int32{r}, got, new(pageScratch)); err != nil {
					t.Fatalf("nulls %v page %d row %d: %v", nulls, p, r, err)
				}
				want.gather(whole, []int32{r})
				if !sameVec(got, want) {
					t.Fatalf("nulls %v page %d row %d:\n%+v\n%+v", nulls, p, r, got, want)
				}
				k := lay.valueOf(int(r))
				if k < 0 {
					continue
				}
				from, to := at, at+4+int64(whole.offs[r+1]-whole.offs[r])
				at = to
				a, b := fr.span(from, to)
				if frames := int64(fr.comp[b] - fr.comp[a]); counted.bytes > frames {
					t.Errorf("nulls %v page %d row %d (bytes [%d,%d), frames %d-%d): read %d compressed bytes, its frames hold %d", nulls, p, r, from, to, a, b, counted.bytes, frames)
				}
				if b-a == 1 {
					within++
				} else {
					straddling++
				}
			}
			if within < int(rows)/2 || straddling == 0 {
				t.Fatalf("nulls %v page %d: %d strings within a frame, %d straddling", nulls, p, within, straddling)
			}
		}
	}
}
