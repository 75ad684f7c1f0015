package table

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// The offsets a probe touches ahead of its reads are those of the rows'
// values (of byte arrays, the run of values holding them); touching a file
// truncated under its mapping does not crash.
func TestPrefetchRowsTouchesValues(t *testing.T) {
	d, p, rows := localBenchFile(t, 40_000)
	if _, ok := d.f.(memoryFile); !ok {
		t.Fatalf("data file read as %T, not mapped", d.f)
	}
	// one row in each page, and in the last one as many as make a row read
	// take it whole (not touched)
	var want []int64
	for r := int64(5); r < int64(len(rows)); r += 1500 {
		want = append(want, r)
	}
	whole := wholePageLeast(d.f, DefaultPageRows)
	for last, i := want[len(want)-1], int64(1); i < int64(whole); i++ {
		want = append(want, last+i)
	}
	sparse := len(want) - whole
	at := func(off int64, n int) []byte {
		b := make([]byte, n)
		if _, err := d.f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		return b
	}
	sc := new(pageScratch)
	countCol, sumCol, labelCol := d.fieldCols[2], d.fieldCols[3], d.fieldCols[4]
	offs := d.appendValueOffsets(nil, countCol, want, sc)
	if len(offs) != sparse {
		t.Fatalf("%d count offsets for %d sparse rows", len(offs), sparse)
	}
	for i, off := range offs {
		if got := int64(binary.LittleEndian.Uint64(at(off, 8))); got != rows[want[i]].Count {
			t.Fatalf("row %d: count %d at %d, want %d", want[i], got, off, rows[want[i]].Count)
		}
	}
	offs = d.appendValueOffsets(nil, sumCol, want, sc)
	for i, off := range offs {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(at(off, 8))); got != rows[want[i]].Sum {
			t.Fatalf("row %d: sum %v at %d, want %v", want[i], got, off, rows[want[i]].Sum)
		}
	}
	// a run of labels starts at a multiple of layoutMark rows of the page
	offs = d.appendValueOffsets(nil, labelCol, want[:1], sc)
	if len(offs) == 0 {
		t.Fatal("no label offsets")
	}
	first := want[0] / DefaultPageRows * DefaultPageRows
	first += (want[0] - first) / layoutMark * layoutMark
	n := binary.LittleEndian.Uint32(at(offs[0], 4))
	if got := string(at(offs[0]+4, int(n))); got != rows[first].Label {
		t.Fatalf("label run of row %d starts with %q, want row %d's %q", want[0], got, first, rows[first].Label)
	}
	if err := os.Truncate(p, 4096); err != nil {
		t.Fatal(err)
	}
	d.prefetchRows([]int{countCol, sumCol, labelCol}, want)
}
