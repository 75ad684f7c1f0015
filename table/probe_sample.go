package table

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// A table larger than the key-page cache misses most of its deepest level's
// key pages, and a miss used to read and decode the whole page (8 KiB of a
// BIGINT key per 1024 rows) to find one key. Where a page's bounds pin every
// key field but the last, an integer stored PLAIN without nulls, the cache
// keeps instead a sample of the page, every keySampleEvery-th key: the
// probe then reads only the run of rows between two samples (512 bytes of a
// BIGINT key) where the page's layout puts them. A sample costs a tenth of
// a packed page, so the samples of every page of a file ten times the
// cache's budget fit in it; they are cached, counted and evicted as pages
// are. A page whose sample is cached is not read whole again: the cache
// then keeps the pages probes find in full (upper levels, hot ranges) and
// the samples of the others.

// keySampleEvery is the spacing, in rows, of a key sample.
const keySampleEvery = 64

// keySample is the sampled last key field of a key page: vals[i] is row
// i*keySampleEvery's.
type keySample struct {
	rows  int
	width int // bytes per value: 4 or 8
	vals  []int64
}

// upgradeAfter is how many probe keys a cached sample is searched for
// before its page, if the cache admits it (admitsOver), is cached whole
// instead: the pages probes search often (upper levels, hot ranges) are
// read whole once and then searched in memory, while the rest cost their
// samples' bytes only.
const upgradeAfter = 4

func (s *keySample) memSize() int { return 8*cap(s.vals) + 48 }

// sampleable says whether key page p may be sampled: its bounds pin every
// key field but the last and hold the last exactly (so the page's last row
// is its upper bound), and the last is a non-null integer field.
func (kr *keyPageReader) sampleable(p int) bool {
	pb := &kr.pages[p]
	n := len(kr.d.keyTypes)
	if kr.maybe == nil || pb.pinned != n-1 || len(pb.hi) <= pb.pinLen || len(pb.lo) != len(pb.hi) {
		return false
	}
	w := intKeyWidth(kr.d.keyTypes[n-1])
	return w > 0 && len(pb.hi)-pb.pinLen == w
}

// intKeyWidth is the encoded (and PLAIN) width of a non-null INT, DATE or
// BIGINT key field, 0 for other fields (timestamps may be stored in other
// units, or as INT96).
func intKeyWidth(t DataType) int {
	if t.Nullable {
		return 0
	}
	switch t.Root {
	case TypeInt, TypeDate:
		return 4
	case TypeBigInt:
		return 8
	}
	return 0
}

// runsReadable says whether rows of the last key column of sampleable key
// page p can be read alone: its page is PLAIN, of values as wide as the
// field's encoding, without nulls, and its layout is known (learnt here).
// Pages of other writers (dictionaries, other encodings) are not sampled.
func (kr *keyPageReader) runsReadable(p int) bool {
	d := kr.d
	col := d.keyCols[len(d.keyCols)-1]
	gi, q, err := kr.pageOf(p)
	if err != nil {
		return false
	}
	g := &d.groups[gi]
	w := intKeyWidth(d.keyTypes[len(d.keyTypes)-1])
	if !d.sparsePages(g, col) || d.leaves[col].fixedWidth() != w || d.leaves[col].maxDef != 0 {
		return false
	}
	lay := d.pageLayout(g, col, q, kr.runScratch())
	return lay != noLayout && lay.valid == nil && lay.marks == nil
}

// newKeySample samples v, the decoded last key field of a page of rows
// rows; nil when v is not such a field.
func newKeySample(v *colVec, t DataType, rows int) *keySample {
	w := intKeyWidth(t)
	if w == 0 || v.width != w || v.nulls > 0 || len(v.fixed) < rows*w || rows == 0 {
		return nil
	}
	s := &keySample{rows: rows, width: w, vals: make([]int64, 0, (rows+keySampleEvery-1)/keySampleEvery)}
	for r := 0; r < rows; r += keySampleEvery {
		s.vals = append(s.vals, fixedInt(v.fixed, w, r))
	}
	return s
}

// fixedInt is value r of little-endian integers of width w.
func fixedInt(b []byte, w, r int) int64 {
	if w == 4 {
		return int64(int32(binary.LittleEndian.Uint32(b[4*r:])))
	}
	return int64(binary.LittleEndian.Uint64(b[8*r:]))
}

// sampledRun is the run of rows of a sampled key page a probe last read.
type sampledRun struct {
	page  int // key page, -1 for none
	first int // row of the page of vals[0]
	vals  []byte
}

// searchSampled finds the probe key suffix ks (the page's last key field)
// in sampled key page p: it returns the key's row in the page and whether
// the page holds it, reading at most the run of rows between two samples
// (into run, which a next key of the same run reuses).
func (kr *keyPageReader) searchSampled(p int, s *keySample, ks []byte, run *sampledRun) (int, bool, error) {
	if len(ks) != s.width {
		return 0, false, nil
	}
	want := decodeIntKey(ks)
	i := sort.Search(len(s.vals), func(i int) bool { return s.vals[i] > want }) - 1
	if i < 0 {
		return 0, false, nil
	}
	first := i * keySampleEvery
	if s.vals[i] == want {
		return first, true, nil
	}
	end := min(first+keySampleEvery, s.rows)
	if run.page != p || run.first != first {
		run.page = -1
		vals, err := kr.readRun(p, first, end, s.width)
		if err != nil {
			return 0, false, err
		}
		run.page, run.first, run.vals = p, first, vals
	}
	n := end - first
	r := sort.Search(n, func(r int) bool { return fixedInt(run.vals, s.width, r) >= want })
	return first + r, r < n && fixedInt(run.vals, s.width, r) == want, nil
}

// readRun reads rows [first, end) of the last key column of key page p,
// PLAIN values of width bytes, into the reader's run buffer.
func (kr *keyPageReader) readRun(p, first, end, width int) ([]byte, error) {
	d := kr.d
	col := d.keyCols[len(d.keyCols)-1]
	gi, q, err := kr.pageOf(p)
	if err != nil {
		return nil, err
	}
	g := &d.groups[gi]
	sc := kr.runScratch()
	lay := d.pageLayout(g, col, q, sc)
	s := g.pages[col][q]
	if lay == noLayout || lay.valid != nil || lay.marks != nil || d.leaves[col].fixedWidth() != width || d.leaves[col].maxDef != 0 {
		return nil, corruptError(d.path, fmt.Errorf("column %d: key page at %d has no PLAIN layout of %d-byte values", col, s.off, width))
	}
	from, to := lay.values+int64(first*width), lay.values+int64(end*width)
	if lay.frames == nil && to > s.size {
		return nil, corruptError(d.path, fmt.Errorf("column %d: key page at %d: rows [%d,%d) beyond its %d bytes", col, s.off, first, end, s.size))
	}
	b, err := d.layoutBytes(lay, s, from, to, sc)
	if err != nil {
		return nil, corruptError(d.path, fmt.Errorf("column %d: key page at %d: %w", col, s.off, err))
	}
	if len(b) != (end-first)*width {
		return nil, corruptError(d.path, fmt.Errorf("column %d: key page at %d: %d bytes for rows [%d,%d)", col, s.off, len(b), first, end))
	}
	kr.run = append(kr.run[:0], b...)
	return kr.run, nil
}

// pageOf returns the row group of key page p and p's index among the
// group's pages.
func (kr *keyPageReader) pageOf(p int) (gi, q int, err error) {
	d := kr.d
	first := kr.pages[p].span.first
	gi = sort.Search(len(d.groups), func(i int) bool { return d.groups[i].first+d.groups[i].rows > first })
	if gi == len(d.groups) {
		return 0, 0, corruptError(d.path, fmt.Errorf("key page at row %d beyond the row groups", first))
	}
	spans := d.groups[gi].pages[d.keyCols[len(d.keyCols)-1]]
	q = sort.Search(len(spans), func(i int) bool { return spans[i].first >= first })
	if q == len(spans) || spans[q].first != first {
		return 0, 0, corruptError(d.path, fmt.Errorf("no key page at row %d", first))
	}
	return gi, q, nil
}

// runScratch is the page scratch of sampled reads, taken from the pool on
// first use and returned by close.
func (kr *keyPageReader) runScratch() *pageScratch {
	if kr.sc == nil {
		kr.sc = pageScratchPool.Get().(*pageScratch)
		kr.sc.win = kr.sc.win[:0] // another file's
	}
	return kr.sc
}
