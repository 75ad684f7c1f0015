package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A probe hit wants one row of a value page. Of an uncompressed PLAIN page,
// the bytes of that row lie at a place known once the page has been read
// whole: after the header and the definition levels, at a fixed stride, or
// for byte arrays after a known offset every layoutMark values; where the
// page holds nulls, a row's value index is the count of non-null rows
// before it. The first sparse read of such a page learns that layout (from
// the header and definition levels for fixed-width values, from the whole
// page for byte arrays) and keeps it; later ones read only the bytes of the
// wanted rows.

// layoutMark is the spacing, in values, of the byte-array offsets a page
// layout keeps: a sparse read walks at most this many length prefixes.
// Of a page of several zstd frames they lie closer (framedMark), as a
// sparse read decompresses every frame from one offset to the next: 64
// values of 20 bytes span two 4 KiB frames in one read of three, 16 in
// one of thirteen (BenchmarkProbe 1M, 1,000 keys: -5% CPU per key).
const (
	layoutMark = 64
	framedMark = 16
)

// pageLayout is where the values of a page lie, relative to its offset.
type pageLayout struct {
	values int64    // first value; of a zstd page, in its decompressed body
	marks  []uint32 // byte arrays: value i*markEvery() starts at values+marks[i]; the last entry ends the values
	every  int      // values between marks; 0: layoutMark
	// Of a page with nulls: bit r of valid says row r is not null, and
	// before[w] counts the non-null rows before row 64*w.
	valid  []uint64
	before []uint32
	// Of a zstd page, where its frames lie, relative to the page's offset
	// (compressed) and to its decompressed body (plain).
	frames *zstdFrames
	// Of a zstd page of byte arrays: the first value that starts in or
	// after frame f is value frameFirst[f], at values+frameAt[f]. A read
	// of values within a frame starts there or at a later mark, so it
	// decompresses the frame before only for a value straddling the two.
	frameFirst, frameAt []uint32
}

// markEvery is the spacing of the layout's marks, in values.
func (l *pageLayout) markEvery() int {
	if l.every > 0 {
		return l.every
	}
	return layoutMark
}

// valueOf returns the value index of row r, or -1 when r is null.
func (l *pageLayout) valueOf(r int) int {
	if l.valid == nil {
		return r
	}
	w, bit := r/64, uint(r%64)
	if l.valid[w]>>bit&1 == 0 {
		return -1
	}
	return int(l.before[w]) + bits.OnesCount64(l.valid[w]&(1<<bit-1))
}

// noLayout marks a page whose rows are not read alone (not a PLAIN data
// page, or not one the layout reader understands); its reads take the
// general path, which reports what is wrong with it.
var noLayout = &pageLayout{values: -1}

// chunkLayouts holds the learnt layouts of a column chunk's pages.
type chunkLayouts struct {
	once  sync.Once
	pages []atomic.Pointer[pageLayout]
}

// errNoLayout says rows of a page are to be read by the general path.
var errNoLayout = errors.New("page has no known layout")

// sparsePages reports whether pages of column c in group g can have a
// layout: an uncompressed or zstd chunk without a dictionary, of a leaf type
// the page decoder reads.
func (d *DataFile) sparsePages(g *rowGroupInfo, c int) bool {
	m := d.chunkMeta(g, c)
	return d.fastPages(g, c) && (m.Codec == format.Uncompressed || m.Codec == format.Zstd) && m.DictionaryPageOffset <= 0
}

// decodeLaidOut appends rows sel (ascending, relative to the page) of page p
// of column c in group g to dst, reading only their bytes. It returns
// errNoLayout, having appended nothing, when the page's layout does not
// allow it or the read-ahead window holds the page already.
func (d *DataFile) decodeLaidOut(g *rowGroupInfo, c, p int, sel []int32, dst *colVec, sc *pageScratch) error {
	s := g.pages[c][p]
	if !d.sparsePages(g, c) || s.off >= sc.winOff && s.off+s.size <= sc.winOff+int64(len(sc.win)) {
		return errNoLayout
	}
	lay := d.pageLayout(g, c, p, sc)
	if lay == noLayout {
		return errNoLayout
	}
	rows := int(s.end - s.first)
	for i, x := range sel {
		if x < 0 || int(x) >= rows || i > 0 && x <= sel[i-1] {
			return fmt.Errorf("page at %d: row %d of %d rows (out of range or order)", s.off, x, rows)
		}
	}
	leaf := d.leaves[c]
	gap := int64(readAheadGap)
	if readsAreCopies(d.f) {
		gap = copyGap
	}
	for len(sel) > 0 {
		var n int
		if lay.frames == nil {
			n = laidOutRun(lay, leaf, sel, gap)
		} else {
			n = framedRun(lay, leaf, sel)
		}
		if err := d.decodeLaidOutRun(lay, s, leaf, sel[:n], dst, sc); err != nil {
			return err
		}
		sel = sel[n:]
	}
	return nil
}

// copyGap is the most bytes between two wanted values of a page that one
// read of a file read by copies (readsAreCopies) copies through; of other
// files, reads join over readAheadGap, as a system call costs more.
const copyGap = 256

// laidOutRun is how many rows of sel, from the first, have their values
// close enough to one another (at most gap bytes between two) to be read
// at once.
func laidOutRun(lay *pageLayout, leaf leafInfo, sel []int32, gap int64) int {
	w := int64(leaf.fixedWidth())
	prev := -1 // value index of the previous non-null row
	for i, x := range sel {
		k := lay.valueOf(int(x))
		if k < 0 {
			continue
		}
		if prev >= 0 {
			var between int64
			if w > 0 {
				between = int64(k-prev-1) * w
			} else if a, b := k/lay.markEvery(), prev/lay.markEvery()+1; a > b {
				between = int64(lay.marks[a]) - int64(lay.marks[b])
			}
			if between > gap {
				return i
			}
		}
		prev = k
	}
	return len(sel)
}

// framedRun is how many rows of sel, from the first, have their values in
// the zstd frames that hold the first non-null one's: a read decompresses
// those frames only, not the frames between rows further apart.
func framedRun(lay *pageLayout, leaf leafInfo, sel []int32) int {
	fr := lay.frames
	a, b := -1, -1
	for i, x := range sel {
		k := lay.valueOf(int(x))
		if k < 0 {
			continue
		}
		from, to, _ := valueBytes(lay, leaf, k)
		if a < 0 {
			if from < 0 || to <= from || to > int64(fr.plain[len(fr.plain)-1]) {
				return len(sel) // the read reports it
			}
			a, b = fr.span(from, to)
			continue
		}
		if from < int64(fr.plain[a]) || to > int64(fr.plain[b]) {
			return i
		}
	}
	return len(sel)
}

// valueBytes is where value k of a page lies by its layout: bytes [from,
// to) of the page (of a zstd page, of its decompressed body), from the
// start of value first; of byte arrays, from the last mark or frame start
// at or before k, to the next mark or the end of k's frame that holds k.
func valueBytes(lay *pageLayout, leaf leafInfo, k int) (from, to int64, first int) {
	if w := int64(leaf.fixedWidth()); w > 0 {
		return lay.values + int64(k)*w, lay.values + int64(k+1)*w, k
	}
	a := k / lay.markEvery()
	from, to, first = int64(lay.marks[a]), int64(lay.marks[a+1]), a*lay.markEvery()
	if n := len(lay.frameFirst); n > 0 {
		// f: the frame value k starts in
		f := sort.Search(n, func(f int) bool { return int(lay.frameFirst[f]) > k }) - 1
		if f >= 0 && int(lay.frameFirst[f]) > first {
			from, first = int64(lay.frameAt[f]), int(lay.frameFirst[f])
		}
		if f+1 < n {
			// value k ends where value k+1 starts: before the next frame
			// when k+1 starts in this one, else at frameAt[f+1]
			end := int64(lay.frameAt[f+1])
			if k+1 < int(lay.frameFirst[f+1]) {
				end = int64(lay.frames.plain[f+1]) - lay.values
			}
			to = min(to, end)
		}
	}
	return lay.values + from, lay.values + to, first
}

// decodeLaidOutRun appends rows sel of page s by its layout lay, reading
// the bytes from the first to the last of their values at once.
func (d *DataFile) decodeLaidOutRun(lay *pageLayout, s pageSpan, leaf leafInfo, sel []int32, dst *colVec, sc *pageScratch) error {
	lo, hi := -1, 0 // value indexes of the first and past the last non-null row
	for _, x := range sel {
		if k := lay.valueOf(int(x)); k >= 0 {
			if lo < 0 {
				lo = k
			}
			hi = k + 1
		}
	}
	if lo < 0 {
		for range sel {
			dst.appendNull()
		}
		return nil
	}
	from, _, first := valueBytes(lay, leaf, lo) // first: value index of the first value read
	_, to, _ := valueBytes(lay, leaf, hi-1)
	buf, err := d.layoutBytes(lay, s, from, to, sc)
	if err != nil {
		return fmt.Errorf("page at %d: %w", s.off, err)
	}
	src := pageValues{kind: leaf.kind}
	if err := src.loadPlain(buf, hi-first, leaf.typeLen, sc); err != nil {
		return fmt.Errorf("page at %d: %w", s.off, err)
	}
	for _, x := range sel {
		k := lay.valueOf(int(x))
		if k < 0 {
			dst.appendNull()
			continue
		}
		k -= first
		dst.markValidity(true)
		if err := dst.appendValues(&src, k, k+1); err != nil {
			return fmt.Errorf("page at %d: %w", s.off, err)
		}
	}
	return nil
}

// pageLayout returns the layout of page p of column c in group g, learning
// it on first use; noLayout when the page has none (or cannot be read: the
// general path then reports why).
func (d *DataFile) pageLayout(g *rowGroupInfo, c, p int, sc *pageScratch) *pageLayout {
	cl := &g.layouts[c]
	cl.once.Do(func() { cl.pages = make([]atomic.Pointer[pageLayout], len(g.pages[c])) })
	if lay := cl.pages[p].Load(); lay != nil {
		return lay
	}
	lay := d.learnLayout(g, c, g.pages[c][p], sc)
	cl.pages[p].Store(lay)
	return lay
}

// learnPrefix is the bytes of a page of fixed-width values learnLayout
// reads first: header and definition levels usually fit.
const learnPrefix = 512

// learnLayout reads page s and finds where its values lie: of fixed-width
// values, from the page's first bytes (header and definition levels); of
// byte arrays, from the whole page, whose length prefixes it walks.
func (d *DataFile) learnLayout(g *rowGroupInfo, c int, s pageSpan, sc *pageScratch) *pageLayout {
	start, end := chunkRange(d.chunkMeta(g, c))
	if s.off < start || s.size <= 0 || s.off+s.size > end {
		return noLayout
	}
	read, zstdBound := s.size, int64(0)
	if m := d.chunkMeta(g, c); m.Codec == format.Zstd {
		zstdBound = min(maxPageBytes, max(m.TotalUncompressedSize, 1))
	} else if d.leaves[c].fixedWidth() > 0 {
		read = min(s.size, learnPrefix)
	}
	for {
		raw, err := sc.bytes(d.f, s.off, read)
		if err != nil {
			return noLayout
		}
		lay, short := d.layoutOf(c, s, raw, zstdBound, sc)
		if !short || read == s.size {
			return lay
		}
		read = s.size
	}
}

// layoutOf finds the layout of page s of column c from its first bytes
// raw (of a zstd page, all of them, and zstdBound bounds its decompressed
// size; 0 for an uncompressed page); short says raw ends before what it
// needs.
func (d *DataFile) layoutOf(c int, s pageSpan, raw []byte, zstdBound int64, sc *pageScratch) (_ *pageLayout, short bool) {
	zstd := zstdBound > 0
	h, n, err := parsePageHeader(raw)
	if errors.Is(err, errShortHeader) {
		return noLayout, true
	}
	rows := int(s.end - s.first)
	if err != nil || h.typ != pageTypeData || !h.hasData || h.encoding != encodingPlain ||
		!zstd && h.compressed != h.uncompressed || h.compressed < 0 || int64(n)+int64(h.compressed) > s.size || int(h.numValues) != rows {
		return noLayout, false
	}
	full := int(h.compressed) // bytes of the body, of which raw may hold a part
	body := raw[n:min(len(raw), n+full)]
	values := int64(n)
	lay := new(pageLayout)
	if zstd {
		if len(body) < full {
			return noLayout, true
		}
		if int64(h.uncompressed) > zstdBound {
			return noLayout, false
		}
		var frames zstdFrames
		var plain []byte
		var ok bool
		if d.leaves[c].fixedWidth() > 0 {
			frames, plain, ok = zstdLevels(body, int(h.uncompressed), d.leaves[c].maxDef > 0, sc)
		} else {
			frames, plain, ok = zstdBody(body, int(h.uncompressed), sc)
		}
		if !ok {
			return noLayout, false
		}
		for i := range frames.comp {
			frames.comp[i] += uint32(n)
		}
		lay.frames = &frames
		if plain != nil {
			sc.plainOf = lay // a first read of the page's rows takes them from there
		}
		body, full, values = plain, int(h.uncompressed), 0
	}
	leaf := d.leaves[c]
	if leaf.maxDef > 0 {
		if h.defEncoding != encodingRLE || full < 4 {
			return noLayout, false
		}
		if len(body) < 4 {
			return noLayout, true
		}
		k := binary.LittleEndian.Uint32(body)
		if uint64(k) > uint64(full-4) {
			return noLayout, false
		}
		if uint64(k) > uint64(len(body)-4) {
			return noLayout, true
		}
		sc.defs = grow(sc.defs, rows)
		if decodeHybrid(body[4:4+k], 1, sc.defs) != nil {
			return noLayout, false
		}
		nonNull := 0
		for _, x := range sc.defs {
			if x > leaf.maxDef {
				return noLayout, false
			}
			if x == leaf.maxDef {
				nonNull++
			}
		}
		if nonNull < rows {
			lay.valid = make([]uint64, (rows+63)/64)
			lay.before = make([]uint32, len(lay.valid))
			seen := 0
			for r, x := range sc.defs {
				if r%64 == 0 {
					lay.before[r/64] = uint32(seen)
				}
				if x == leaf.maxDef {
					lay.valid[r/64] |= 1 << (r % 64)
					seen++
				}
			}
		}
		body = body[4+k:]
		full -= 4 + int(k)
		values += 4 + int64(k)
		rows = nonNull
	}
	lay.values = values
	if w := leaf.fixedWidth(); w > 0 {
		if uint64(rows)*uint64(w) > uint64(full) {
			return noLayout, false
		}
		return lay, false
	}
	if leaf.kind != parquet.ByteArray {
		return noLayout, false
	}
	if len(body) < full {
		return noLayout, true
	}
	if lay.frames != nil && len(lay.frames.comp) > 2 {
		lay.every = framedMark
	}
	every := lay.markEvery()
	marks := make([]uint32, 0, (rows+every-1)/every+1)
	var bounds []uint32 // frame starts, relative to the values
	if fr := lay.frames; fr != nil && len(fr.comp) > 2 {
		for _, p := range fr.plain[:len(fr.plain)-1] {
			bounds = append(bounds, uint32(max(0, int64(p)-values)))
		}
		lay.frameFirst, lay.frameAt = make([]uint32, 0, len(bounds)), make([]uint32, 0, len(bounds))
	}
	at := uint64(0)
	for j := range rows {
		if j%every == 0 {
			marks = append(marks, uint32(at))
		}
		for f := len(lay.frameFirst); f < len(bounds) && at >= uint64(bounds[f]); f++ {
			lay.frameFirst, lay.frameAt = append(lay.frameFirst, uint32(j)), append(lay.frameAt, uint32(at))
		}
		if at+4 > uint64(len(body)) {
			return noLayout, false
		}
		at += 4 + uint64(binary.LittleEndian.Uint32(body[at:]))
		if at > uint64(len(body)) {
			return noLayout, false
		}
	}
	lay.marks = append(marks, uint32(at))
	for f := len(lay.frameFirst); f < len(bounds); f++ { // frames after the last value's start
		lay.frameFirst, lay.frameAt = append(lay.frameFirst, uint32(rows)), append(lay.frameAt, uint32(at))
	}
	return lay, false
}
