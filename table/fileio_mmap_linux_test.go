package table

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func openMapped(t *testing.T, fio FileIO, p string) *mappedFile {
	t.Helper()
	f, err := fio.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := f.(*mappedFile)
	if !ok {
		t.Fatalf("a %d-byte file opened as %T, not mapped", f.Size(), f)
	}
	return m
}

// A mapped file reads as pread would: whole ranges, a short read with
// io.EOF at the end, ErrClosed after Close.
func TestMappedFileReads(t *testing.T) {
	content := make([]byte, mapMinBytes+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range content {
		content[i] = byte(r.Uint32())
	}
	p := filepath.Join(t.TempDir(), "big")
	fio := NewLocalFileIO()
	writeLocal(t, fio, p, string(content))
	small := filepath.Join(t.TempDir(), "small")
	writeLocal(t, fio, small, "tiny")
	if f, err := fio.Open(small); err != nil {
		t.Fatal(err)
	} else if _, mapped := f.(*mappedFile); mapped {
		t.Fatal("a small file was mapped")
	} else {
		f.Close()
	}
	m := openMapped(t, fio, p)
	if m.Size() != int64(len(content)) {
		t.Fatalf("size %d, want %d", m.Size(), len(content))
	}
	for _, c := range []struct{ off, n int }{{0, 10}, {4093, 9000}, {len(content) - 7, 7}, {mapMinBytes, 12345}} {
		buf := make([]byte, c.n)
		if n, err := m.ReadAt(buf, int64(c.off)); n != c.n || err != nil || !bytes.Equal(buf, content[c.off:c.off+c.n]) {
			t.Fatalf("read %d at %d: %d %v", c.n, c.off, n, err)
		}
	}
	buf := make([]byte, 100)
	if n, err := m.ReadAt(buf, int64(len(content)-40)); n != 40 || err != io.EOF || !bytes.Equal(buf[:40], content[len(content)-40:]) {
		t.Fatalf("read over the end: %d %v", n, err)
	}
	if n, err := m.ReadAt(buf, int64(len(content))); n != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d %v", n, err)
	}
	if _, err := m.ReadAt(buf, -1); err == nil {
		t.Fatal("read at a negative offset succeeded")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadAt(buf, 0); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	if err := m.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

// A file truncated under its mapping gives an error naming it where the
// pages it lost are read (SIGBUS under the mapping), never a crash; what
// it kept still reads.
func TestMappedFileTruncatedUnderMapping(t *testing.T) {
	p := filepath.Join(t.TempDir(), "shrinks")
	fio := NewLocalFileIO()
	content := bytes.Repeat([]byte("0123456789abcdef"), (mapMinBytes+8192)/16)
	writeLocal(t, fio, p, string(content))
	m := openMapped(t, fio, p)
	defer m.Close()
	if err := os.Truncate(p, 4096); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := m.ReadAt(buf, mapMinBytes)
	if err == nil || err == io.EOF || !strings.Contains(err.Error(), p) {
		t.Fatalf("read of a truncated page: %d %v, want an error naming the file", n, err)
	}
	if n, err := m.ReadAt(buf, 64); n != 64 || err != nil || !bytes.Equal(buf, content[64:128]) {
		t.Fatalf("read of a kept page: %d %v", n, err)
	}
}

// A data file truncated after open fails probes and row reads that reach
// its lost pages with an error naming it.
func TestProbeOfDataFileTruncatedUnderMapping(t *testing.T) {
	d, p, rows := localBenchFile(t, 40_000)
	if _, ok := d.f.(*mappedFile); !ok {
		t.Fatalf("data file of %d bytes read as %T, not mapped", d.f.Size(), d.f)
	}
	d.keyCache = newKeyPageCache(1 << 20)
	types := []DataType{Int().NotNull(), BigInt().NotNull()}
	enc := func(i int) []byte {
		return AppendKeyDatums(nil, types, []Datum{IntDatum(int64(rows[i].KG)), IntDatum(rows[i].Key)})
	}
	last := len(rows) - 1
	ms, err := d.lookup([][]byte{enc(0), enc(last)}, []int32{0, 1}, nil)
	if err != nil || len(ms) != 2 || ms[1].pos != int64(last) {
		t.Fatalf("lookup before truncation: %v %v", ms, err)
	}
	if err := os.Truncate(p, 4096); err != nil {
		t.Fatal(err)
	}
	d.keyCache = newKeyPageCache(1 << 20) // forget the decoded pages
	if _, err := d.lookup([][]byte{enc(last - 5000)}, []int32{0}, nil); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("lookup in lost pages: %v, want an error naming the file", err)
	}
	out := newColVec(String())
	if err := d.readRows(d.fieldCols[4], []int64{int64(last)}, out); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("row read in lost pages: %v, want an error naming the file", err)
	}
}

// Sparse reads of a mapped file read far-apart rows of a page one run at a
// time, and give the rows whole-page decoding gives, with and without
// nulls; row reads of every density give the rows a range read gives.
func TestMappedSparseReadsInRuns(t *testing.T) {
	for _, codec := range []string{"none", "none-nulls"} {
		var data []byte
		if c, ok := strings.CutSuffix(codec, "-nulls"); ok {
			fio, p := writtenStateFile(t, c)
			b, err := fio.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data = b
		} else {
			d := laidOutFile(t, codec)
			b := make([]byte, d.f.Size())
			if _, err := d.f.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			data = b
		}
		p := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		mf, ok := mapWhole(f, p, int64(len(data)))
		if !ok {
			t.Fatal("not mapped")
		}
		d, err := openDataFile(mf, p, stateSchema())
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		g := &d.groups[0]
		runs := 0
		for c := range d.leaves {
			if !d.sparsePages(g, c) {
				continue
			}
			ty := columnType(d, c)
			for p, s := range g.pages[c] {
				whole := newColVec(ty)
				if err := d.decodePage(g, c, s, whole, new(pageScratch)); err != nil {
					t.Fatal(err)
				}
				rows := int32(whole.n)
				sels := [][]int32{{0, rows - 1}, {1, 2, rows / 2, rows - 1}, {6, 7, 8, layoutMark + 1, 3 * layoutMark, rows - 2}, {0, 1, 2, 3, 4}}
				for round := range 2 { // the first read learns the layout
					for _, sel := range sels {
						if !slices.IsSorted(sel) || sel[len(sel)-1] >= rows {
							continue
						}
						if lay := d.pageLayout(g, c, p, new(pageScratch)); round == 1 && lay != noLayout && laidOutRun(lay, d.leaves[c], sel, copyGap) < len(sel) {
							runs++
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
			}
		}
		if runs == 0 {
			t.Fatalf("%s: no read was cut into runs", codec)
		}
		// row reads of a column, sparse and dense, as readRange reads them
		for c := range d.leaves {
			if !d.sparsePages(g, c) {
				continue
			}
			ty := columnType(d, c)
			all := newColVec(ty)
			if err := d.readRange(c, 0, d.numRows, all); err != nil {
				t.Fatal(err)
			}
			for _, step := range []int64{1, 3, 40, 299, 1000} {
				var pos []int64
				var sel []int32
				for r := step / 2; r < d.numRows; r += step {
					pos, sel = append(pos, r), append(sel, int32(r))
				}
				got, want := newColVec(ty), newColVec(ty)
				if err := d.readRows(c, pos, got); err != nil {
					t.Fatalf("%s column %d every %d rows: %v", codec, c, step, err)
				}
				want.gather(all, sel)
				if !sameVec(got, want) {
					t.Fatalf("%s column %d every %d rows:\n%+v\n%+v", codec, c, step, got, want)
				}
			}
		}
	}
}

// A read joins wanted values up to gap bytes apart: of fixed-width values
// counting the values between, of byte arrays the layout marks between;
// nulls take no bytes.
func TestLaidOutRun(t *testing.T) {
	fixed := &pageLayout{}
	i64 := leafInfo{kind: parquet.Int64}
	for _, c := range []struct {
		sel  []int32
		want int
	}{
		{[]int32{0, 1, 33, 34, 80}, 4}, // 31 values (248 bytes) between 1 and 33, 45 between 34 and 80
		{[]int32{0, 34}, 1},
		{[]int32{5}, 1},
	} {
		if got := laidOutRun(fixed, i64, c.sel, 256); got != c.want {
			t.Errorf("fixed %v: %d, want %d", c.sel, got, c.want)
		}
	}
	// rows 64..127 null: value k of row r >= 128 is r-64
	nulls := &pageLayout{valid: []uint64{^uint64(0), 0, ^uint64(0), ^uint64(0)}, before: []uint32{0, 64, 64, 128}}
	if got := laidOutRun(nulls, i64, []int32{60, 70, 130}, 256); got != 3 {
		t.Errorf("nulls: %d, want 3 (rows 60 and 130 are values 60 and 66)", got)
	}
	if got := laidOutRun(fixed, i64, []int32{60, 70, 130}, 256); got != 2 {
		t.Errorf("no nulls: %d, want 2", got)
	}
	strs := &pageLayout{marks: []uint32{0, 1000, 1100, 1200, 5000, 5100}}
	ba := leafInfo{kind: parquet.ByteArray}
	for _, c := range []struct {
		sel  []int32
		want int
	}{
		{[]int32{1, 63, 64, 130}, 4},   // marks 0 to 2: nothing between 0 and 1, 100 bytes of mark 1 between 1 and 2
		{[]int32{1, 130, 200, 260}, 4}, // the runs of marks 3 and 4 hold wanted values
		{[]int32{1, 260}, 1},           // marks 1 to 3 (4000 bytes) between
	} {
		if got := laidOutRun(strs, ba, c.sel, 256); got != c.want {
			t.Errorf("byte arrays %v: %d, want %d", c.sel, got, c.want)
		}
	}
}
