package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
)

// A table larger than the key-page cache misses most of its deepest level's
// key pages, and a miss used to read and decode the whole page (8 KiB of a
// BIGINT key per 1024 rows) to find one key. Where a page's bounds pin every
// key field but the last, an integer stored PLAIN without nulls, the cache
// keeps instead a sample of the page, every keySampleEvery-th key: the
// probe then reads only the run of rows between two samples (512 bytes of a
// BIGINT key; of a zstd page, the frame that holds them) where the page's
// layout puts them. A sample costs a tenth of a packed page, so the samples
// of every page of a file ten times the cache's budget fit in it; they are
// cached, counted and evicted as pages are. A page first searched while the
// cache is full is not read whole either: its sample starts from the
// page's bounds and learns its entries from the runs probes read, the
// first of a page guessed by interpolation between the entries known. The
// cache keeps whole the pages probes search often (upper levels, hot
// ranges) and the samples of the others.

// keySampleEvery is the spacing, in rows, of a key sample.
const keySampleEvery = 64

// keySample is the sampled last key field of a key page: vals[i] is row
// i*keySampleEvery's, or unknownEntry. A sample made from the decoded page
// knows every entry; one made when the page is first searched
// (partialKeySample) knows the first, and learns the others as the runs
// of rows that probes read show them, so a first search reads a run or
// two rather than the page. Entries are set once, atomically, so probes
// may share a sample while it learns. (The last field ascends within the
// page, so no entry but the first, always known, is the least int64.)
type keySample struct {
	rows  int
	width int   // bytes per value: 4 or 8
	last  int64 // the page's last row's
	vals  []int64
}

// unknownEntry marks a sample entry not learnt yet.
const unknownEntry = math.MinInt64

// entry returns sample entry i and whether it is known.
func (s *keySample) entry(i int) (int64, bool) {
	v := atomic.LoadInt64(&s.vals[i])
	return v, i == 0 || v != unknownEntry
}

// learn sets entry i.
func (s *keySample) learn(i int, v int64) { atomic.StoreInt64(&s.vals[i], v) }

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

// framed says whether the last key column's page of key page p is zstd in
// several frames, of which a run read decompresses one: the page is then
// not read whole to sample it (partialKeySample). An uncompressed page is
// a copy, and a page of one frame is decompressed whole by any run read.
func (kr *keyPageReader) framed(p int) bool {
	d := kr.d
	col := d.keyCols[len(d.keyCols)-1]
	gi, q, err := kr.pageOf(p)
	if err != nil {
		return false
	}
	lay := d.pageLayout(&d.groups[gi], col, q, kr.runScratch())
	return lay != noLayout && lay.frames != nil && len(lay.frames.comp) > 2
}

// newKeySample samples v, the decoded last key field of a page of rows
// rows; nil when v is not such a field.
func newKeySample(v *colVec, t DataType, rows int) *keySample {
	w := intKeyWidth(t)
	if w == 0 || v.width != w || v.nulls > 0 || len(v.fixed) < rows*w || rows == 0 {
		return nil
	}
	s := emptyKeySample(rows, w, fixedInt(v.fixed, w, rows-1))
	for r := 0; r < rows; r += keySampleEvery {
		s.learn(r/keySampleEvery, fixedInt(v.fixed, w, r))
	}
	return s
}

// partialKeySample is the sample of sampleable key page p that knows only
// what the page's bounds say: its first and last rows' last key field.
func (kr *keyPageReader) partialKeySample(p int) *keySample {
	pb := &kr.pages[p]
	s := emptyKeySample(int(pb.span.end-pb.span.first), len(pb.lo)-pb.pinLen, decodeIntKey(pb.hi[pb.pinLen:]))
	s.learn(0, decodeIntKey(pb.lo[pb.pinLen:]))
	return s
}

func emptyKeySample(rows, width int, last int64) *keySample {
	s := &keySample{rows: rows, width: width, last: last, vals: make([]int64, (rows+keySampleEvery-1)/keySampleEvery)}
	for i := range s.vals {
		s.vals[i] = unknownEntry
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

// rows returns the run's first row and row count when it is of page p.
func (run *sampledRun) rows(p, width int) (first, n int) {
	if run.page != p {
		return 0, 0
	}
	return run.first, len(run.vals) / width
}

// searchSampled finds the probe key suffix ks (the page's last key field)
// in sampled key page p: it returns the key's row in the page and whether
// the page holds it. Between the known sample entries around the key it
// reads the run of rows where the key would lie, guessed by interpolation
// where entries between are unknown, learning the entries each run shows,
// until the key's run is read (into run, which a next key of the same run
// reuses).
func (kr *keyPageReader) searchSampled(p int, s *keySample, ks []byte, run *sampledRun) (int, bool, error) {
	if len(ks) != s.width {
		return 0, false, nil
	}
	want := decodeIntKey(ks)
	n := len(s.vals)
	for {
		if first, m := run.rows(p, s.width); m > 0 && fixedInt(run.vals, s.width, 0) <= want && want <= fixedInt(run.vals, s.width, m-1) {
			r := sort.Search(m, func(r int) bool { return fixedInt(run.vals, s.width, r) >= want })
			return first + r, fixedInt(run.vals, s.width, r) == want, nil
		}
		// the known entries around want: i at or below it, j above it
		i, iv := -1, int64(0)
		j, jv := n, s.last+1
		for e := 0; e < n; e++ {
			v, ok := s.entry(e)
			if !ok {
				continue
			}
			if v > want {
				j, jv = e, v
				break
			}
			i, iv = e, v
		}
		switch {
		case i < 0 || want > s.last:
			return 0, false, nil // beyond the page
		case iv == want:
			return i * keySampleEvery, true, nil
		}
		g := i // the run to read: want's when j follows i, else a guess
		if j > i+1 {
			g = i + 1 + int(float64(j-i-1)*float64(want-iv)/float64(jv-iv))
			g = min(max(g, i+1), j-1)
		}
		first, end := g*keySampleEvery, min((g+1)*keySampleEvery, s.rows)
		run.page = -1
		vals, first, err := kr.readRun(p, first, end, s.width)
		if err != nil {
			return 0, false, err
		}
		run.page, run.first, run.vals = p, first, vals
		m := len(vals) / s.width
		for r := (first + keySampleEvery - 1) / keySampleEvery * keySampleEvery; r < first+m; r += keySampleEvery {
			s.learn(r/keySampleEvery, fixedInt(vals, s.width, r-first))
		}
		if g == i && want > fixedInt(vals, s.width, m-1) {
			return 0, false, nil // between i's run and j: absent
		}
	}
}

// readRun reads rows [first, end) of the last key column of key page p,
// PLAIN values of width bytes, into the reader's run buffer; of a zstd
// page, the rows of the frames that hold them where frames start on a
// value (as from says: the row of the first value read).
func (kr *keyPageReader) readRun(p, first, end, width int) (_ []byte, from int, err error) {
	d := kr.d
	col := d.keyCols[len(d.keyCols)-1]
	gi, q, err := kr.pageOf(p)
	if err != nil {
		return nil, 0, err
	}
	g := &d.groups[gi]
	sc := kr.runScratch()
	lay := d.pageLayout(g, col, q, sc)
	s := g.pages[col][q]
	if lay == noLayout || lay.valid != nil || lay.marks != nil || d.leaves[col].fixedWidth() != width || d.leaves[col].maxDef != 0 {
		return nil, 0, corruptError(d.path, fmt.Errorf("column %d: key page at %d has no PLAIN layout of %d-byte values", col, s.off, width))
	}
	w := int64(width)
	if fr := lay.frames; fr != nil && first < end {
		// the frames' other rows cost nothing more
		a, b := fr.span(lay.values+int64(first)*w, lay.values+int64(end)*w)
		if f0, f1 := int64(fr.plain[a])-lay.values, int64(fr.plain[b])-lay.values; f0 >= 0 && f0%w == 0 && f1%w == 0 && f1/w <= int64(kr.pages[p].span.end-kr.pages[p].span.first) {
			first, end = int(f0/w), int(f1/w)
		}
	}
	from64, to := lay.values+int64(first)*w, lay.values+int64(end)*w
	if lay.frames == nil && to > s.size {
		return nil, 0, corruptError(d.path, fmt.Errorf("column %d: key page at %d: rows [%d,%d) beyond its %d bytes", col, s.off, first, end, s.size))
	}
	b, err := d.layoutBytes(lay, s, from64, to, sc)
	if err != nil {
		return nil, 0, corruptError(d.path, fmt.Errorf("column %d: key page at %d: %w", col, s.off, err))
	}
	if len(b) != (end-first)*width {
		return nil, 0, corruptError(d.path, fmt.Errorf("column %d: key page at %d: %d bytes for rows [%d,%d)", col, s.off, len(b), first, end))
	}
	kr.run = append(kr.run[:0], b...)
	return kr.run, first, nil
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
