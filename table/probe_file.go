package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// pageBound is a key page of a data file with bounds on the keys it holds:
// every key k of the page has lo <= k and k[:len(hi)] <= hi, where lo and hi
// encode a prefix of the key fields (as far as the page index pins them).
// Nil bounds are open. The first pinned key fields are the same in every
// row (their bounds are equal): their encoding is lo[:pinLen], and a probe
// need not decode them.
type pageBound struct {
	span           pageSpan
	lo, hi         []byte
	pinned, pinLen int
}

// keyPages returns the pages of the key columns with their bounds, computed
// once per file from the column index. Files whose key columns do not break
// pages at the same rows (other writers) get bounds from the first key
// column only.
func (d *DataFile) keyPages() []pageBound {
	d.keyPagesOnce.Do(func() { d.keyPageBounds = d.computeKeyPages() })
	return d.keyPageBounds
}

func (d *DataFile) computeKeyPages() (out []pageBound) {
	defer func() {
		if recover() != nil {
			out = d.wholeGroups()
		}
	}()
	for _, g := range d.groups {
		spans := g.pages[d.keyCols[0]]
		if spans == nil {
			return d.wholeGroups()
		}
		usable := 1
		for k := 1; k < len(d.keyCols); k++ {
			if !sameSpans(spans, g.pages[d.keyCols[k]]) {
				break
			}
			usable++
		}
		chunks := g.rg.ColumnChunks()
		idx := make([]parquet.ColumnIndex, usable)
		for k := range idx {
			ci, err := chunks[d.keyCols[k]].ColumnIndex()
			if err != nil || ci == nil || ci.NumPages() != len(spans) {
				idx = idx[:k]
				break
			}
			idx[k] = ci
		}
		for p, s := range spans {
			b := pageBound{span: s}
			for k, ci := range idx {
				if ci.NullPage(p) {
					break
				}
				t := d.keyTypes[k]
				lo, okLo := boundDatum(ci.MinValue(p), t)
				hi, okHi := boundDatum(ci.MaxValue(p), t)
				if !okLo || !okHi {
					break
				}
				b.lo = appendKeyDatum(b.lo, t, lo)
				b.hi = appendKeyDatum(b.hi, t, hi)
				if CompareDatum(t, lo, hi) != 0 {
					break
				}
				b.pinned, b.pinLen = k+1, len(b.lo)
			}
			out = append(out, b)
		}
	}
	return out
}

func (d *DataFile) wholeGroups() []pageBound {
	out := make([]pageBound, len(d.groups))
	for i, g := range d.groups {
		out[i] = pageBound{span: pageSpan{first: g.first, end: g.first + g.rows}}
	}
	return out
}

// boundDatum converts a page-index bound to a datum for the integer and
// string types keys use; other types (and strings the index may have
// truncated) give no bound.
func boundDatum(v parquet.Value, t DataType) (Datum, bool) {
	if v.IsNull() {
		return Datum{}, false
	}
	switch t.Root {
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeDate:
		if v.Kind() == parquet.Int32 {
			return IntDatum(int64(v.Int32())), true
		}
	case TypeBigInt:
		if v.Kind() == parquet.Int64 {
			return IntDatum(v.Int64()), true
		}
	case TypeString, TypeBytes:
		if v.Kind() == parquet.ByteArray && len(v.ByteArray()) < 64 {
			return BytesDatum(v.ByteArray()), true
		}
	}
	return Datum{}, false
}

// probeMatch is a probe key found in a file: its index in the probe batch and
// its row position in the file.
type probeMatch struct {
	key int32
	pos int64
}

// probeScratch holds reusable decode buffers of one probing goroutine.
type probeScratch struct {
	keyVecs []*colVec
	page    keyPage // a page decoded into keyVecs
	want    []int64 // a probe key's fields, for packed pages
	enc     []byte
	last    []byte
}

func (sc *probeScratch) prepare(types []DataType) {
	// The scratch is pooled across files: keep vectors of a longer key in
	// capacity, but never hand them to a file of a shorter one.
	if cap(sc.keyVecs) < len(types) {
		sc.keyVecs = append(sc.keyVecs[:cap(sc.keyVecs)], make([]*colVec, len(types)-cap(sc.keyVecs))...)
	}
	sc.keyVecs = sc.keyVecs[:len(types)]
	for k, t := range types {
		if sc.keyVecs[k] == nil || sc.keyVecs[k].t != t {
			sc.keyVecs[k] = newColVec(t)
		}
	}
}

var probeScratchPool = sync.Pool{New: func() any { return new(probeScratch) }}

// lookup finds the given probe keys (encoded, ascending, unique) in the file
// and appends (ids[j], row position) of each key j present to out, in key
// order. Page bounds skip pages without decoding them; a key page answers
// its keys by binary search over its rows, comparing only the key fields
// its bounds do not pin and encoding only the rows the search touches. Key
// pages come from the key-page cache, or are decoded (those that may hold a
// probe key read ahead together where they lie close in the file) and
// cached.
func (d *DataFile) lookup(keys [][]byte, ids []int32, out []probeMatch) (_ []probeMatch, err error) {
	defer guard(d.path, &err)
	pages := d.keyPages()
	sc := probeScratchPool.Get().(*probeScratch)
	defer probeScratchPool.Put(sc)
	kr := d.newKeyPageReader(pages, keys, true)
	defer kr.close()
	defer d.keyCache.clock.Add(int64(len(keys)))
	var page *keyPage // key fields pinned.. of page decoded
	var types []DataType
	rowKey := func(r int) []byte {
		sc.enc = page.appendKey(sc.enc[:0], types, r)
		return sc.enc
	}
	decoded, rows, from := -1, 0, 0
	var last []byte // the decoded page's last key (fields pinned..)
	run := sampledRun{page: -1}
	for p, j := 0, 0; j < len(keys) && p < len(pages); {
		pb := &pages[p]
		k := keys[j]
		if pb.hi != nil && bytes.Compare(k[:min(len(k), len(pb.hi))], pb.hi) > 0 {
			p++ // every row of the page is below k
			continue
		}
		if pb.lo != nil && bytes.Compare(k, pb.lo) < 0 {
			j++ // k lies between this page and the previous one: absent
			continue
		}
		// Within the bounds, k starts with the pinned fields.
		if !bytes.HasPrefix(k, pb.lo[:pb.pinLen]) {
			j++
			continue
		}
		if decoded != p {
			// A batch with upgradeAfter keys or more within the page's
			// bounds searches it enough to cache it whole now (bounds
			// of the whole key where the page may be sampled).
			dense := pb.hi == nil
			if e := j + upgradeAfter - 1; !dense && e < len(keys) {
				ke := keys[e]
				dense = bytes.Compare(ke[:min(len(ke), len(pb.hi))], pb.hi) <= 0
			}
			if page, err = kr.page(p, sc, dense); err != nil {
				return out, err
			}
			types = d.keyTypes[pb.pinned:]
			decoded, rows, from = p, int(pb.span.end-pb.span.first), 0
			switch {
			case page.packed != nil:
				last = page.packed.last
			case page.sample == nil:
				sc.last = append(sc.last[:0], rowKey(rows-1)...)
				last = sc.last
			}
		}
		ks := k[pb.pinLen:]
		page.hits.Add(1)
		if page.sample != nil {
			// within the bounds: the page's last row is its upper bound
			r, eq, err := kr.searchSampled(p, page.sample, ks, &run)
			if err != nil {
				return out, err
			}
			if eq {
				out = append(out, probeMatch{key: ids[j], pos: pb.span.first + int64(r)})
			}
			j++
			continue
		}
		if bytes.Compare(ks, last) > 0 {
			p++
			continue
		}
		var r int
		var eq bool
		if sc.want = grow(sc.want, len(types)); page.packedWant(ks, sc.want) {
			r, eq = page.packed.search(sc.want)
		} else if ik, ok := newIntKey(page.vecs, types, rows, ks); ok {
			r = searchFrom(from, rows, func(i int) bool { return ik.cmp(i) >= 0 })
			eq = r < rows && ik.cmp(r) == 0
		} else {
			r = searchFrom(from, rows, func(i int) bool { return bytes.Compare(rowKey(i), ks) >= 0 })
			eq = r < rows && bytes.Equal(rowKey(r), ks)
		}
		if eq {
			out = append(out, probeMatch{key: ids[j], pos: pb.span.first + int64(r)})
		}
		from = r
		j++
	}
	return out, nil
}

// searchFrom returns the first i in [from, n) with ge(i) (n if none), ge
// being false and then true along the range. The first key on a page is
// searched by bisection; the next ones, of a dense batch, gallop from the
// previous key's row, touching about 2*log2(distance) rows.
func searchFrom(from, n int, ge func(i int) bool) int {
	if from == 0 {
		return sort.Search(n, ge)
	}
	lo, step := from, 1
	for lo+step < n && !ge(lo+step-1) {
		lo += step
		step *= 2
	}
	hi := min(n, lo+step)
	return lo + sort.Search(hi-lo, func(x int) bool { return ge(lo + x) })
}

// intKey compares the rows of a key page with a probe key when the page's
// unpinned key fields are non-null INT or BIGINT fields (a state table's
// key after its key group, or key group and key where a page spans key
// groups): as numbers, without encoding rows.
type intKey struct {
	vecs []*colVec
	want [4]int64
}

// newIntKey decodes the encoded probe key suffix ks for the page's vectors;
// ok is false for other keys.
func newIntKey(vecs []*colVec, types []DataType, rows int, ks []byte) (ik intKey, ok bool) {
	if len(types) == 0 || len(types) > len(ik.want) {
		return ik, false
	}
	at := 0
	for c, t := range types {
		w := arrowWidth(t)
		switch {
		case t.Nullable || len(vecs[c].fixed) < w*rows || len(ks) < at+w:
			return ik, false
		case (t.Root == TypeBigInt || t.Root == TypeTimestamp) && w == 8:
			ik.want[c] = int64(binary.BigEndian.Uint64(ks[at:]) ^ 1<<63)
		case (t.Root == TypeInt || t.Root == TypeDate) && w == 4:
			ik.want[c] = int64(int32(binary.BigEndian.Uint32(ks[at:]) ^ 1<<31))
		default:
			return ik, false
		}
		at += w
	}
	ik.vecs = vecs[:len(types)]
	return ik, at == len(ks)
}

// cmp compares row i of the page with the probe key.
func (ik *intKey) cmp(i int) int {
	for c, v := range ik.vecs {
		var x int64
		if v.width == 8 {
			x = int64(binary.LittleEndian.Uint64(v.fixed[8*i:]))
		} else {
			x = int64(int32(binary.LittleEndian.Uint32(v.fixed[4*i:])))
		}
		if x != ik.want[c] {
			if x < ik.want[c] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// keyPageReader decodes the key columns of key pages. When every key column
// breaks pages where the first does (files this package writes), it keeps a
// page reader per key column on the current row group and reads ahead the
// pages whose bounds admit a probe key.
type keyPageReader struct {
	d       *DataFile
	pages   []pageBound
	maybe   []bool // per key page: its bounds admit a probe key
	group   int    // row group of the open readers, -1 for none
	base    int    // key page index of the group's first page
	readers []*pageReader
	sc      *pageScratch // of sampled reads (runScratch)
	run     []byte       // rows of a sampled page last read
}

// newKeyPageReader reads ahead the pages that may hold the keys (whole
// keys when exact, else key prefixes), ascending.
func (d *DataFile) newKeyPageReader(pages []pageBound, keys [][]byte, exact bool) *keyPageReader {
	kr := &keyPageReader{d: d, pages: pages, group: -1}
	spanCount := 0
	for _, g := range d.groups {
		spans := g.pages[d.keyCols[0]]
		if spans == nil {
			return kr
		}
		for _, c := range d.keyCols[1:] {
			if !sameSpans(spans, g.pages[c]) {
				return kr
			}
		}
		spanCount += len(spans)
	}
	if spanCount != len(pages) {
		return kr // bounds per row group, not per page
	}
	// The pages a key may be on are [p, e); both ends only grow with the
	// key, so each page is visited once.
	kr.maybe = make([]bool, len(pages))
	p, next := 0, 0
	for _, k := range keys {
		for p < len(pages) && pages[p].hi != nil && bytes.Compare(k[:min(len(k), len(pages[p].hi))], pages[p].hi) > 0 {
			p++
		}
		q := max(p, next)
		for ; q < len(pages); q++ {
			lo, hi := pages[q].lo, pages[q].hi
			if m := min(len(lo), len(k)); lo != nil && bytes.Compare(lo[:m], k[:m]) > 0 {
				break // the page starts beyond k
			}
			kr.maybe[q] = true
			if hi != nil && len(hi) >= len(k) {
				// rows after the page are beyond k, or beyond every row starting with k
				if c := bytes.Compare(hi[:len(k)], k); c > 0 || c == 0 && exact && len(hi) == len(k) {
					q++
					break
				}
			}
		}
		next = q
	}
	return kr
}

// page returns key page p: the key fields from pageBound.pinned on, from
// the key-page cache, or the page's sample from it, else decoded. dense
// says the batch searches the page for upgradeAfter keys or more. A page
// that may be sampled is read whole and cached (packed) when it fits and
// the batch is dense, or once its sample has been searched upgradeAfter
// times and often enough to displace what it would evict (admitsOver);
// else its sample is cached: of a page of zstd frames, the page is not
// read, and its sample knows the page's bounds only until probes read its
// runs; of another, the page is decoded into sc's vectors and sampled
// whole. Another page is read whole, and cached on its second miss in a
// while (firstMiss) where the cache admits it, else decoded into sc's
// vectors: a page missed once is likely not searched again (a page a key
// filter let a key pass to in vain, in maintenance, or one of a file
// compaction is about to replace), and caching it would cost several
// times its decoding (packing, copying). The page is read-only.
func (kr *keyPageReader) page(p int, sc *probeScratch, dense bool) (*keyPage, error) {
	id := keyPageID{file: kr.d.id, page: p}
	cache := kr.d.keyCache
	sampled := kr.sampleable(p)
	cached := cache.getPage(id, sampled) // the page, or its sample
	if cached != nil && (cached.sample == nil || cached.hits.Load() < max(upgradeAfter, cached.upgradeAt.Load())) {
		return cached, nil
	}
	pb := &kr.pages[p]
	from, rows := pb.pinned, int(pb.span.end-pb.span.first)
	size := rows * 8 * (len(kr.d.keyTypes) - from)
	if intKeyFields(kr.d.keyTypes[from:]) {
		size = rows * 4 // likely packed
	}
	size += cachedPageOverhead
	sampleID := keyPageID{file: kr.d.id, page: p, sample: true}
	switch {
	case cached != nil:
		if !cache.admitsOver(size, cached) {
			cached.upgradeAt.Store(2 * cached.hits.Load())
			return cached, nil
		}
	case sampled && kr.runsReadable(p):
		switch {
		case dense && cache.fits(size):
		case kr.framed(p):
			sp := &keyPage{sample: kr.partialKeySample(p)}
			cache.add(sampleID, sp)
			return sp, nil
		default:
			sc.prepare(kr.d.keyTypes)
			if err := kr.read(p, from, sc.keyVecs); err != nil {
				return nil, err
			}
			sc.page = keyPage{vecs: sc.keyVecs[from:]}
			n := len(kr.d.keyTypes)
			if s := newKeySample(sc.keyVecs[n-1], kr.d.keyTypes[n-1], rows); s != nil {
				cache.add(sampleID, &keyPage{sample: s})
			}
			return &sc.page, nil
		}
	case cache.firstMiss(id) || !cache.admits(size):
		sc.prepare(kr.d.keyTypes)
		if err := kr.read(p, from, sc.keyVecs); err != nil {
			return nil, err
		}
		sc.page = keyPage{vecs: sc.keyVecs[from:]}
		return &sc.page, nil
	}
	page, err := kr.decodeToCache(p, from, rows, sc)
	if err != nil {
		return nil, err
	}
	if cached != nil {
		// the page takes over its sample's searches
		page.hits.Store(cached.hits.Load())
		page.since = cached.since
		cache.remove(sampleID)
	}
	cache.add(id, page)
	return page, nil
}

// decodeToCache decodes key page p (its key fields from on, of rows rows)
// for the cache: packed when its fields pack, decoded through sc's vectors
// then, which packing leaves as they were; else into vectors of its own,
// without slack.
func (kr *keyPageReader) decodeToCache(p, from, rows int, sc *probeScratch) (*keyPage, error) {
	types := kr.d.keyTypes
	if intKeyFields(types[from:]) {
		sc.prepare(types)
		if err := kr.read(p, from, sc.keyVecs); err != nil {
			return nil, err
		}
		if pk := packKeys(sc.keyVecs[from:], types[from:], rows); pk != nil {
			return &keyPage{packed: pk}, nil
		}
		vecs := make([]*colVec, len(types)-from)
		for c, v := range sc.keyVecs[from:] {
			vecs[c] = &colVec{t: v.t, width: v.width, n: v.n, fixed: slices.Clone(v.fixed), valid: slices.Clone(v.valid), nulls: v.nulls}
		}
		return &keyPage{vecs: vecs}, nil
	}
	vecs := make([]*colVec, len(types))
	for c := from; c < len(vecs); c++ {
		v := newColVec(types[c])
		if v.width > 0 {
			v.fixed = make([]byte, 0, rows*v.width) // cached: no slack
		}
		vecs[c] = v
	}
	if err := kr.read(p, from, vecs); err != nil {
		return nil, err
	}
	return &keyPage{vecs: vecs[from:]}, nil
}

// read decodes the key fields from on of key page p into vecs (one per key
// column).
func (kr *keyPageReader) read(p, from int, vecs []*colVec) error {
	d := kr.d
	s := kr.pages[p].span
	if kr.maybe == nil {
		for c := from; c < len(d.keyCols); c++ {
			col := d.keyCols[c]
			vecs[c].reset()
			if err := d.readRange(col, s.first, s.end, vecs[c]); err != nil {
				return err
			}
		}
		return nil
	}
	gi := sort.Search(len(d.groups), func(i int) bool { return d.groups[i].first+d.groups[i].rows > s.first })
	if gi != kr.group {
		kr.close()
		kr.base = p - sort.Search(len(d.groups[gi].pages[d.keyCols[0]]), func(i int) bool {
			return d.groups[gi].pages[d.keyCols[0]][i].first >= s.first
		})
		kr.group = gi
		for _, col := range d.keyCols {
			kr.readers = append(kr.readers, d.newPageReader(&d.groups[gi], col))
		}
	}
	g := &d.groups[gi]
	q := p - kr.base
	for c := from; c < len(kr.readers); c++ {
		pr := kr.readers[c]
		if err := pr.readAhead(q, func(r int) bool {
			return kr.base+r < len(kr.maybe) && kr.maybe[kr.base+r] && !d.keyCache.holds(d.id, kr.base+r)
		}); err != nil {
			return corruptError(d.path, fmt.Errorf("column %d: %w", d.keyCols[c], err))
		}
		if err := pr.read(g.pages[d.keyCols[c]][q], vecs[c]); err != nil {
			return corruptError(d.path, fmt.Errorf("column %d: %w", d.keyCols[c], err))
		}
	}
	return nil
}

func (kr *keyPageReader) close() {
	if kr.sc != nil {
		pageScratchPool.Put(kr.sc)
		kr.sc = nil
	}
	for _, pr := range kr.readers {
		pr.close()
	}
	kr.readers = kr.readers[:0]
	kr.group = -1
}

// appendKey appends the order-preserving encoding of row r of v.
func (v *colVec) appendKey(dst []byte, t DataType, r int) []byte {
	if t.Nullable {
		if v.nulls > 0 && v.valid[r/8]&(1<<(r%8)) == 0 {
			return append(dst, 0)
		}
		dst = append(dst, 1)
	}
	switch t.Root {
	case TypeString, TypeBytes:
		for _, c := range v.data[v.offs[r]:v.offs[r+1]] {
			dst = append(dst, c)
			if c == 0 {
				dst = append(dst, 0xFF)
			}
		}
		return append(dst, 0, 1)
	case TypeInt, TypeDate:
		return binary.BigEndian.AppendUint32(dst, binary.LittleEndian.Uint32(v.fixed[4*r:])^1<<31)
	case TypeBigInt, TypeTimestamp:
		return binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(v.fixed[8*r:])^1<<63)
	case TypeTinyInt:
		return append(dst, v.fixed[r]^0x80)
	case TypeSmallInt:
		return binary.BigEndian.AppendUint16(dst, binary.LittleEndian.Uint16(v.fixed[2*r:])^1<<15)
	case TypeBoolean:
		if v.bits[r/8]&(1<<(r%8)) != 0 {
			return append(dst, 0x81)
		}
		return append(dst, 0x80)
	case TypeFloat:
		return binary.BigEndian.AppendUint32(dst, orderedFloat32(math.Float32frombits(binary.LittleEndian.Uint32(v.fixed[4*r:]))))
	case TypeDouble:
		return binary.BigEndian.AppendUint64(dst, orderedFloat64(math.Float64frombits(binary.LittleEndian.Uint64(v.fixed[8*r:]))))
	case TypeDecimal:
		dst = binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(v.fixed[16*r+8:])^1<<63)
		return binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(v.fixed[16*r:]))
	}
	panic("key encoding: unsupported type " + t.String())
}
