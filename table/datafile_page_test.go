package table

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// decodeBothWays decodes every page of d with the page decoder and with
// parquet-go and fails on any difference. It returns how many pages the
// page decoder left to parquet-go.
func decodeBothWays(t *testing.T, d *DataFile) (fallbacks int) {
	t.Helper()
	sc := new(pageScratch)
	for gi := range d.groups {
		g := &d.groups[gi]
		for c := range d.leaves {
			if !d.fastPages(g, c) {
				fallbacks += len(g.pages[c])
				continue
			}
			ty := columnType(d, c)
			pages := g.rg.ColumnChunks()[c].Pages()
			for pi, s := range g.pages[c] {
				fast := newColVec(ty)
				err := d.decodePage(g, c, s, fast, sc)
				if errors.Is(err, errFallback) {
					fallbacks++
					continue
				}
				if err != nil {
					t.Fatalf("%s column %d page at %d: %v", d.path, c, s.off, err)
				}
				if err := pages.SeekToRow(s.first - g.first); err != nil {
					t.Fatal(err)
				}
				p, err := pages.ReadPage()
				if err != nil {
					t.Fatal(err)
				}
				slow := newColVec(ty)
				if err := slow.appendPage(p, d.leaves[c].kind, d.leaves[c].maxDef); err != nil {
					t.Fatal(err)
				}
				parquet.Release(p)
				if !sameVec(fast, slow) {
					t.Fatalf("%s column %d page at %d: page decoder and parquet-go differ:\n%+v\n%+v", d.path, c, s.off, fast, slow)
				}
				var sel []int32
				for r := int32(1); r < int32(slow.n); r += 3 {
					sel = append(sel, r)
				}
				some, want := newColVec(ty), newColVec(ty)
				if err := d.decodePageRows(g, c, pi, sel, some, sc); err != nil {
					t.Fatal(err)
				}
				want.gather(slow, sel)
				if !sameVec(some, want) {
					t.Fatalf("%s column %d page at %d: selected rows differ:\n%+v\n%+v", d.path, c, s.off, some, want)
				}
			}
			pages.Close()
		}
	}
	return fallbacks
}

// columnType is the Paimon type a leaf column decodes as.
func columnType(d *DataFile, c int) DataType {
	for k, kc := range d.keyCols {
		if kc == c {
			return d.keyTypes[k]
		}
	}
	switch c {
	case d.seqCol:
		return BigInt().NotNull()
	case d.kindCol:
		return TinyInt().NotNull()
	}
	for i, fc := range d.fieldCols {
		if fc == c {
			return d.schema.Fields[i].Type
		}
	}
	panic("column of no field")
}

func sameVec(a, b *colVec) bool {
	if a.n != b.n || a.nulls != b.nulls || !bytes.Equal(a.fixed, b.fixed) || !bytes.Equal(a.data, b.data) || len(a.offs) != len(b.offs) {
		return false
	}
	for i := range a.offs {
		if a.offs[i] != b.offs[i] {
			return false
		}
	}
	for i := 0; i < a.n && a.nulls > 0; i++ {
		if (a.valid[i/8]>>(i%8))&1 != (b.valid[i/8]>>(i%8))&1 {
			return false
		}
	}
	return true
}

// writtenStateFile writes the state schema's rows (nulls, strings, decimals,
// timestamps) in small pages with the given codec.
func writtenStateFile(t testing.TB, codec string) (*memFS, string) {
	s := stateSchema()
	rec := buildStateRecord(t, s, 2500)
	defer rec.Release()
	fio := newMemFS()
	kinds := make([]ValueKind, rec.NumRows())
	for i := range kinds {
		kinds[i] = ValueKind(i % 4)
	}
	if _, err := WriteDataFile(fio, "bucket-0/"+codec+".parquet", s, rec, seqRange(0, int(rec.NumRows())), kinds,
		testPageOptions(codec)); err != nil {
		t.Fatal(err)
	}
	return fio, "bucket-0/" + codec + ".parquet"
}

// testPageOptions writes 300-row pages with codec; "zstd" is zstd in one
// frame per page, "zstd-frames" zstd in frames of 48 values of fixed-width
// columns and 512 bytes of byte arrays.
func testPageOptions(codec string) DataFileOptions {
	switch codec {
	case "zstd":
		return DataFileOptions{Compression: "zstd", ZstdFrameBytes: -1, PageRows: 300}
	case "zstd-frames":
		return DataFileOptions{Compression: "zstd", ZstdFrameBytes: 512, ZstdFrameRows: 48, PageRows: 300}
	}
	return DataFileOptions{Compression: codec, PageRows: 300}
}

// The page decoder reads every page this package writes (booleans aside)
// and every page of the Java-written fixtures exactly as parquet-go does.
func TestPageDecoderMatchesParquetGo(t *testing.T) {
	for _, codec := range []string{"none", "zstd", "zstd-frames", "snappy"} {
		fio, p := writtenStateFile(t, codec)
		d, err := OpenDataFile(fio, p, stateSchema())
		if err != nil {
			t.Fatal(err)
		}
		booleans := 0
		for c, l := range d.leaves {
			if l.kind == parquet.Boolean {
				booleans += len(d.groups[0].pages[c])
			}
		}
		if fb := decodeBothWays(t, d); fb != booleans {
			t.Errorf("%s: %d pages fell back to parquet-go, want only the %d boolean pages", codec, fb, booleans)
		}
	}
	for i, b := range fixtureDataFiles(t) {
		d, err := openMem(b, "fixture.parquet", fixturePKSchema(true))
		if err != nil {
			t.Fatal(err)
		}
		if fb := decodeBothWays(t, d); fb != 0 {
			t.Errorf("fixture file %d: %d pages fell back to parquet-go", i, fb)
		}
	}
}

// FuzzPageDecoder replaces the bytes of one page of a valid file and decodes
// it: an error or a page, never a panic, and read errors name the file.
func FuzzPageDecoder(f *testing.F) {
	fio, p := writtenStateFile(f, "none")
	good, _ := fio.ReadFile(p)
	d, err := openMem(good, p, stateSchema())
	if err != nil {
		f.Fatal(err)
	}
	type target struct {
		c, p int
		s    pageSpan
	}
	var targets []target
	for c := range d.leaves {
		for p, s := range d.groups[0].pages[c][:2] {
			targets = append(targets, target{c, p, s})
		}
	}
	for i, tg := range targets {
		f.Add(uint8(i), good[tg.s.off:tg.s.off+tg.s.size])
	}
	f.Add(uint8(0), []byte{0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x2c, 0x15, 0x02, 0x00})
	f.Fuzz(func(t *testing.T, which uint8, page []byte) {
		tg := targets[int(which)%len(targets)]
		data := bytes.Clone(good)
		copy(data[tg.s.off:tg.s.off+tg.s.size], page)
		if int64(len(page)) < tg.s.size {
			clear(data[tg.s.off+int64(len(page)) : tg.s.off+tg.s.size])
		}
		d, err := openMem(data, p, stateSchema())
		if err != nil {
			return
		}
		g := &d.groups[0]
		if d.fastPages(g, tg.c) {
			// no guard here: a panic fails the fuzz target
			_ = d.decodePage(g, tg.c, tg.s, newColVec(columnType(d, tg.c)), new(pageScratch))
			// sparse rows: the first read of an uncompressed page learns its
			// layout, the second reads only its rows by that layout
			rows := int32(tg.s.end - tg.s.first)
			_ = d.decodePageRows(g, tg.c, tg.p, []int32{0}, newColVec(columnType(d, tg.c)), new(pageScratch))
			_ = d.decodePageRows(g, tg.c, tg.p, []int32{rows / 3, rows / 2}, newColVec(columnType(d, tg.c)), new(pageScratch))
		}
		v := newColVec(columnType(d, tg.c))
		if err := d.readRange(tg.c, tg.s.first, tg.s.end, v); err != nil && !strings.Contains(err.Error(), p) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
