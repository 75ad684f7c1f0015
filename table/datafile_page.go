package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// The page reader decodes the data pages this package and Paimon write (v1,
// PLAIN or dictionary encoded, RLE definition levels, uncompressed, zstd or
// snappy) straight from the bytes the offset index locates: one ReadAt per
// page, a compact-protocol header, a pooled decompressor, and values copied
// once into the column's Arrow layout. Anything else (v2 pages, other
// encodings or codecs, booleans, files without an offset index) goes through
// parquet-go's page reader.

// pageScratch holds the buffers of one page read; pooled, so concurrent
// readers of one View do not share them.
type pageScratch struct {
	win    []byte // file bytes [winOff, winOff+len(win)) read ahead
	winOff int64
	raw    []byte
	plain  []byte
	// plain holds the decompressed body, from its start, of the zstd page
	// whose layout plainOf is (learnt with it), else nil
	plainOf *pageLayout
	defs    []byte
	idx     []int32
	offs    []uint32
}

var pageScratchPool = sync.Pool{New: func() any { return new(pageScratch) }}

// errFallback says a page needs parquet-go's reader.
var errFallback = errors.New("page needs the general reader")

// chunkDict is a column chunk's dictionary, decoded on first use. Values
// are copied out of the page buffers, so the dictionary outlives the read.
type chunkDict struct {
	once sync.Once
	vals *pageValues
	n    int
	err  error
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// fastPages reports whether the pages of column c can be read without
// parquet-go: the chunk's codec is one the page reader decompresses and the
// column is not boolean.
func (d *DataFile) fastPages(g *rowGroupInfo, c int) bool {
	if g.pages[c] == nil || d.leaves[c].kind == parquet.Boolean {
		return false
	}
	switch d.chunkMeta(g, c).Codec {
	case format.Uncompressed, format.Snappy, format.Zstd:
		return true
	}
	return false
}

func (d *DataFile) chunkMeta(g *rowGroupInfo, c int) *format.ColumnMetaData {
	return &d.pf.Metadata().RowGroups[g.ordinal].Columns[c].MetaData
}

// bytes returns file bytes [off, off+size): from the read-ahead window when
// it holds them, else read into raw.
func (sc *pageScratch) bytes(f ReadableFile, off, size int64) ([]byte, error) {
	if off >= sc.winOff && off+size <= sc.winOff+int64(len(sc.win)) {
		return sc.win[off-sc.winOff : off-sc.winOff+size], nil
	}
	sc.raw = grow(sc.raw, int(size))
	if _, err := f.ReadAt(sc.raw, off); err != nil {
		return nil, err
	}
	return sc.raw, nil
}

// Read-ahead joins the reads of pages that lie close together in a file
// into one, within these bounds.
const (
	readAheadGap = 16 << 10 // bytes between two wanted pages read through
	readAheadMax = 1 << 20
)

// readAhead reads, in one ReadAt, the pages from spans[p] on that needed
// accepts and that lie close after one another, unless the window already
// holds spans[p] or only spans[p] would be read.
func (sc *pageScratch) readAhead(f ReadableFile, spans []pageSpan, p int, needed func(q int) bool) error {
	s := spans[p]
	if s.off >= sc.winOff && s.off+s.size <= sc.winOff+int64(len(sc.win)) {
		return nil
	}
	end := s.off + s.size
	for q := p + 1; q < len(spans) && needed(q); q++ {
		n := spans[q]
		if n.off < end || n.off-end > readAheadGap || n.off+n.size-s.off > readAheadMax {
			break
		}
		end = n.off + n.size
	}
	if end == s.off+s.size {
		return nil
	}
	sc.win = grow(sc.win, int(end-s.off))
	if _, err := f.ReadAt(sc.win, s.off); err != nil {
		sc.win = sc.win[:0]
		return fmt.Errorf("pages at %d: %w", s.off, err)
	}
	sc.winOff = s.off
	return nil
}

// pageBytes reads the page at s (header included) and returns its header and
// decompressed body; the body aliases sc's buffers. A prefix below size
// reads only the first prefix bytes of an uncompressed page, and returns
// the body truncated there.
func (d *DataFile) pageBytes(m *format.ColumnMetaData, off, size, prefix int64, sc *pageScratch) (pageHeader, []byte, error) {
	start, end := chunkRange(m)
	if off < start || size <= 0 || off+size > end {
		return pageHeader{}, nil, fmt.Errorf("page [%d,+%d) outside its chunk [%d,%d)", off, size, start, end)
	}
	read := size
	if prefix > 0 && prefix < size && m.Codec == format.Uncompressed {
		read = prefix
	}
	raw, err := sc.bytes(d.f, off, read)
	if err != nil {
		return pageHeader{}, nil, fmt.Errorf("page at %d: %w", off, err)
	}
	h, n, err := parsePageHeader(raw)
	if err != nil {
		return h, nil, fmt.Errorf("page at %d: %w", off, err)
	}
	if int64(n)+int64(h.compressed) > size {
		return h, nil, fmt.Errorf("page at %d: %d compressed bytes overrun its %d", off, h.compressed, size-int64(n))
	}
	if read < size {
		if h.compressed != h.uncompressed {
			return h, nil, fmt.Errorf("page at %d: %d bytes stored for %d uncompressed", off, h.compressed, h.uncompressed)
		}
		return h, raw[n:min(len(raw), n+int(h.compressed))], nil
	}
	bound := min(maxPageBytes, max(m.TotalUncompressedSize, 0))
	if int64(h.uncompressed) > bound {
		return h, nil, fmt.Errorf("page at %d: uncompressed size %d beyond the chunk's %d", off, h.uncompressed, bound)
	}
	src := raw[n : n+int(h.compressed)]
	switch m.Codec {
	case format.Uncompressed:
		if h.compressed != h.uncompressed {
			return h, nil, fmt.Errorf("page at %d: %d bytes stored for %d uncompressed", off, h.compressed, h.uncompressed)
		}
		return h, src, nil
	case format.Snappy:
		dl, err := snappy.DecodedLen(src)
		if err != nil || dl != int(h.uncompressed) {
			return h, nil, fmt.Errorf("page at %d: snappy block of %d bytes for %d uncompressed (%v)", off, dl, h.uncompressed, err)
		}
		sc.plain, sc.plainOf = grow(sc.plain, dl), nil
		out, err := snappy.Decode(sc.plain, src)
		if err != nil {
			return h, nil, fmt.Errorf("page at %d: snappy: %w", off, err)
		}
		return h, out, nil
	case format.Zstd:
		sc.plain, sc.plainOf = grow(sc.plain, int(h.uncompressed)), nil
		if err := zstdDecodeInto(sc.plain, src); err != nil {
			return h, nil, fmt.Errorf("page at %d: zstd: %w", off, err)
		}
		return h, sc.plain, nil
	}
	return h, nil, errFallback
}

// decodePage decodes page s of column c in group g onto dst. It returns
// errFallback, having appended nothing, for pages it leaves to parquet-go.
func (d *DataFile) decodePage(g *rowGroupInfo, c int, s pageSpan, dst *colVec, sc *pageScratch) error {
	rows, defs, src, err := d.pageData(g, c, s, int(s.end-s.first), sc)
	if err != nil {
		return err
	}
	if err := dst.appendDecoded(rows, defs, d.leaves[c].maxDef, &src); err != nil {
		return fmt.Errorf("page at %d: %w", s.off, err)
	}
	return nil
}

// decodePageRows appends rows sel (ascending, relative to the page) of page
// p of column c in group g to dst, converting only those, and reading only
// their bytes where the page's layout is known. It returns errFallback,
// having appended nothing, for pages it leaves to parquet-go.
func (d *DataFile) decodePageRows(g *rowGroupInfo, c, p int, sel []int32, dst *colVec, sc *pageScratch) error {
	if len(sel) == 0 {
		return nil
	}
	if err := d.decodeLaidOut(g, c, p, sel, dst, sc); !errors.Is(err, errNoLayout) {
		return err
	}
	s := g.pages[c][p]
	rows, defs, src, err := d.pageData(g, c, s, int(sel[len(sel)-1])+1, sc)
	if err != nil {
		return err
	}
	maxDef := d.leaves[c].maxDef
	k, r := 0, 0 // value index of row r
	for _, x := range sel {
		if int(x) >= rows || int(x) < r {
			return fmt.Errorf("page at %d: row %d of %d rows", s.off, x, rows)
		}
		if defs != nil {
			for ; r < int(x); r++ {
				if defs[r] == maxDef {
					k++
				}
			}
			if defs[x] != maxDef {
				dst.appendNull()
				continue
			}
		} else {
			k, r = int(x), int(x)
		}
		if k >= src.n {
			return fmt.Errorf("page at %d: row %d beyond its %d values", s.off, x, src.n)
		}
		dst.markValidity(true)
		if err := dst.appendValues(&src, k, k+1); err != nil {
			return fmt.Errorf("page at %d: %w", s.off, err)
		}
	}
	return nil
}

// pageData reads page s of column c in group g: its row count, its
// definition levels (nil when no row is null) and the non-null values of its
// first upto rows, all aliasing sc. Of an uncompressed page outside the
// read-ahead window whose wanted rows lie in its first part, it first reads
// only the prefix that likely holds them (sparse probes of large files read
// about half a page per row), and the whole page when that falls short.
func (d *DataFile) pageData(g *rowGroupInfo, c int, s pageSpan, upto int, sc *pageScratch) (int, []byte, pageValues, error) {
	if prefix := d.pagePrefix(g, c, s, upto, sc); prefix > 0 {
		rows, defs, src, err := d.pageDataPrefix(g, c, s, upto, prefix, sc)
		if err == nil || errors.Is(err, errFallback) {
			return rows, defs, src, err
		}
	}
	return d.pageDataPrefix(g, c, s, upto, 0, sc)
}

// pagePrefix estimates the bytes of page s (header included) that hold the
// values of its first upto rows; 0 to read it whole.
func (d *DataFile) pagePrefix(g *rowGroupInfo, c int, s pageSpan, upto int, sc *pageScratch) int64 {
	rows := s.end - s.first
	if m := d.chunkMeta(g, c); rows <= 0 || m.Codec != format.Uncompressed || m.DictionaryPageOffset > 0 {
		return 0 // dictionary pages hold indexes, not values at a known place
	}
	if s.off >= sc.winOff && s.off+s.size <= sc.winOff+int64(len(sc.win)) {
		return 0 // read already
	}
	var prefix int64
	switch w := d.leaves[c].fixedWidth(); {
	case w > 0: // values end the page; header and levels come first
		prefix = s.size - int64(w)*(rows-int64(upto)) + 64
	default:
		prefix = s.size*int64(upto)/rows + 512
	}
	if prefix > s.size*3/4 {
		return 0
	}
	return prefix
}

// fixedWidth is the PLAIN width of the leaf's values, 0 for byte arrays
// and booleans.
func (l leafInfo) fixedWidth() int { return plainWidth(l.kind, l.typeLen) }

// plainWidth is the PLAIN width in bytes of a value of a physical kind
// (fixedLen: a fixed-length byte array's length), 0 for byte arrays and
// booleans.
func plainWidth(kind parquet.Kind, fixedLen int) int {
	switch kind {
	case parquet.Int32, parquet.Float:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 12
	case parquet.FixedLenByteArray:
		return fixedLen
	}
	return 0
}

// pageDataPrefix is pageData reading the first prefix bytes of the page
// (all of it for 0).
func (d *DataFile) pageDataPrefix(g *rowGroupInfo, c int, s pageSpan, upto int, prefix int64, sc *pageScratch) (int, []byte, pageValues, error) {
	m := d.chunkMeta(g, c)
	h, body, err := d.pageBytes(m, s.off, s.size, prefix, sc)
	if err != nil {
		return 0, nil, pageValues{}, err
	}
	if h.typ != pageTypeData || !h.hasData {
		if h.typ == pageTypeData+3 { // data page v2
			return 0, nil, pageValues{}, errFallback
		}
		return 0, nil, pageValues{}, fmt.Errorf("page at %d: type %d where a data page belongs", s.off, h.typ)
	}
	rows := int(s.end - s.first)
	if int(h.numValues) != rows {
		return 0, nil, pageValues{}, fmt.Errorf("page at %d holds %d values, the offset index says %d rows", s.off, h.numValues, rows)
	}
	leaf := d.leaves[c]
	var defs []byte
	nonNull := rows
	if leaf.maxDef > 0 {
		if h.defEncoding != encodingRLE {
			return 0, nil, pageValues{}, errFallback
		}
		if len(body) < 4 {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: definition levels truncated", s.off)
		}
		n := binary.LittleEndian.Uint32(body)
		if uint64(n) > uint64(len(body)-4) {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: %d bytes of definition levels in a body of %d", s.off, n, len(body))
		}
		sc.defs = grow(sc.defs, rows)
		if err := decodeHybrid(body[4:4+n], 1, sc.defs); err != nil {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: definition levels: %w", s.off, err)
		}
		body = body[4+n:]
		nonNull = 0
		for _, x := range sc.defs {
			if x > leaf.maxDef {
				return 0, nil, pageValues{}, fmt.Errorf("page at %d: definition level %d above %d", s.off, x, leaf.maxDef)
			}
			if x == leaf.maxDef {
				nonNull++
			}
		}
		if nonNull < rows {
			defs = sc.defs
		}
	}
	need := min(upto, rows) // values of the rows wanted
	if defs != nil {
		need = 0
		for _, x := range defs[:min(upto, rows)] {
			if x == leaf.maxDef {
				need++
			}
		}
	}
	src := pageValues{kind: leaf.kind}
	switch h.encoding {
	case encodingPlain:
		if err := src.loadPlain(body, need, leaf.typeLen, sc); err != nil {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: %w", s.off, err)
		}
	case encodingPlainDictionary, encodingRLEDictionary:
		dict, err := d.dictionary(g, c)
		if err != nil {
			return 0, nil, pageValues{}, err
		}
		if len(body) < 1 || body[0] > 32 {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: dictionary index width missing or above 32", s.off)
		}
		sc.idx = grow(sc.idx, need)
		if err := decodeHybrid(body[1:], int(body[0]), sc.idx); err != nil {
			return 0, nil, pageValues{}, fmt.Errorf("page at %d: dictionary indexes: %w", s.off, err)
		}
		for _, x := range sc.idx {
			if x < 0 || int(x) >= dict.n {
				return 0, nil, pageValues{}, fmt.Errorf("page at %d: dictionary index %d out of %d entries", s.off, x, dict.n)
			}
		}
		src = *dict.vals
		src.idx, src.n = sc.idx, need
	default:
		return 0, nil, pageValues{}, errFallback
	}
	return rows, defs, src, nil
}

// dictionary returns the decoded dictionary of column c in group g.
func (d *DataFile) dictionary(g *rowGroupInfo, c int) (*chunkDict, error) {
	cd := &g.dicts[c]
	cd.once.Do(func() { cd.err = d.loadDictionary(g, c, cd) })
	return cd, cd.err
}

func (d *DataFile) loadDictionary(g *rowGroupInfo, c int, cd *chunkDict) error {
	m := d.chunkMeta(g, c)
	start, end := chunkRange(m)
	sc := new(pageScratch)
	// The header's length is unknown until parsed: read a prefix first.
	head := min(end-start, 256)
	sc.raw = grow(sc.raw, int(head))
	if _, err := d.f.ReadAt(sc.raw, start); err != nil {
		return fmt.Errorf("dictionary page at %d: %w", start, err)
	}
	h, n, err := parsePageHeader(sc.raw)
	if errors.Is(err, errShortHeader) && head < end-start {
		head = min(end-start, maxPageHeader)
		sc.raw = grow(sc.raw, int(head))
		if _, err := d.f.ReadAt(sc.raw, start); err != nil {
			return fmt.Errorf("dictionary page at %d: %w", start, err)
		}
		h, n, err = parsePageHeader(sc.raw)
	}
	if err != nil {
		return fmt.Errorf("dictionary page at %d: %w", start, err)
	}
	if h.typ != pageTypeDictionary || !h.hasDict {
		return fmt.Errorf("page at %d: type %d where the dictionary belongs", start, h.typ)
	}
	if h.encoding != encodingPlain && h.encoding != encodingPlainDictionary {
		return fmt.Errorf("dictionary page at %d: encoding %d", start, h.encoding)
	}
	h2, body, err := d.pageBytes(m, start, int64(n)+int64(h.compressed), 0, sc)
	if err != nil {
		return err
	}
	if h2 != h {
		return fmt.Errorf("dictionary page at %d changed between reads", start)
	}
	vals := &pageValues{kind: d.leaves[c].kind}
	if err := vals.loadPlain(body, int(h.numValues), d.leaves[c].typeLen, sc); err != nil {
		return fmt.Errorf("dictionary page at %d: %w", start, err)
	}
	vals.own()
	cd.vals, cd.n = vals, int(h.numValues)
	return nil
}

// loadPlain points s at n PLAIN-encoded values of body (byte arrays are
// compacted into sc). The values alias body and sc until own is called.
func (s *pageValues) loadPlain(body []byte, n int, typeLen int, sc *pageScratch) error {
	s.n = n
	fixed := func(width int) ([]byte, error) {
		if uint64(n)*uint64(width) > uint64(len(body)) {
			return nil, fmt.Errorf("%d values of %d bytes in %d bytes", n, width, len(body))
		}
		return body[:n*width], nil
	}
	switch s.kind {
	case parquet.Int32:
		b, err := fixed(4)
		s.i32 = viewAs[int32](b, n)
		return err
	case parquet.Int64:
		b, err := fixed(8)
		s.i64 = viewAs[int64](b, n)
		return err
	case parquet.Float:
		b, err := fixed(4)
		s.f32 = viewAs[float32](b, n)
		return err
	case parquet.Double:
		b, err := fixed(8)
		s.f64 = viewAs[float64](b, n)
		return err
	case parquet.Int96:
		b, err := fixed(12)
		s.i96 = viewAs[deprecated.Int96](b, n)
		return err
	case parquet.FixedLenByteArray:
		if typeLen <= 0 || typeLen > 16 {
			return fmt.Errorf("fixed-length values of %d bytes", typeLen)
		}
		b, err := fixed(typeLen)
		s.data, s.fixed = b, typeLen
		return err
	case parquet.ByteArray:
		if uint64(n)*4 > uint64(len(body)) {
			return fmt.Errorf("%d byte arrays in %d bytes", n, len(body))
		}
		offs := grow(sc.offs, n+1)
		at := uint64(0)
		for j := range n {
			if at+4 > uint64(len(body)) {
				return fmt.Errorf("byte array length truncated")
			}
			offs[j] = uint32(at)
			at += 4 + uint64(binary.LittleEndian.Uint32(body[at:]))
			if at > uint64(len(body)) {
				return fmt.Errorf("byte array overruns the page")
			}
		}
		offs[n] = uint32(at)
		sc.offs = offs
		s.data, s.offs, s.prefixed = body[:at], offs, true
		return nil
	}
	return fmt.Errorf("physical type %s", s.kind)
}

// own copies the values out of the buffers they alias.
func (s *pageValues) own() {
	s.i32 = append([]int32(nil), s.i32...)
	s.i64 = append([]int64(nil), s.i64...)
	s.f32 = append([]float32(nil), s.f32...)
	s.f64 = append([]float64(nil), s.f64...)
	s.i96 = append([]deprecated.Int96(nil), s.i96...)
	s.data = append([]byte(nil), s.data...)
	s.offs = append([]uint32(nil), s.offs...)
}

// viewAs reinterprets b as n values of T (little-endian hosts, which the
// unaligned loads of amd64 and arm64 allow).
func viewAs[T int32 | int64 | float32 | float64 | deprecated.Int96](b []byte, n int) []T {
	if n == 0 || len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// decodeHybrid decodes len(out) values of the RLE / bit-packed hybrid
// encoding of the given bit width.
func decodeHybrid[T uint8 | int32](b []byte, width int, out []T) error {
	if width < 0 || width > 32 || (width > 8 && unsafe.Sizeof(out[0]) == 1) {
		return fmt.Errorf("bit width %d", width)
	}
	mask := uint64(1)<<width - 1
	for i := 0; i < len(out); {
		h, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("run header truncated after %d of %d values", i, len(out))
		}
		b = b[n:]
		if h&1 == 0 { // run of one value
			count := h >> 1
			vb := (width + 7) / 8
			if len(b) < vb {
				return fmt.Errorf("run value truncated")
			}
			var v uint64
			for k := vb - 1; k >= 0; k-- {
				v = v<<8 | uint64(b[k])
			}
			b = b[vb:]
			if v > mask {
				return fmt.Errorf("run value %d wider than %d bits", v, width)
			}
			m := min(count, uint64(len(out)-i))
			if count == 0 {
				return fmt.Errorf("empty run")
			}
			for k := range int(m) {
				out[i+k] = T(v)
			}
			i += int(m)
			continue
		}
		groups := h >> 1
		if groups == 0 || groups > 1<<28 {
			return fmt.Errorf("%d bit-packed groups", groups)
		}
		nbytes := groups * uint64(width)
		if nbytes > uint64(len(b)) {
			return fmt.Errorf("%d bit-packed groups of width %d in %d bytes", groups, width, len(b))
		}
		m := min(int(groups*8), len(out)-i)
		packed := b[:nbytes]
		for k := range m {
			bit := k * width
			var w uint64
			if p := bit / 8; p+8 <= len(packed) {
				w = binary.LittleEndian.Uint64(packed[p:])
			} else {
				var tmp [8]byte
				copy(tmp[:], packed[p:])
				w = binary.LittleEndian.Uint64(tmp[:])
			}
			out[i+k] = T((w >> (bit % 8)) & mask)
		}
		i += m
		b = b[nbytes:]
	}
	return nil
}
