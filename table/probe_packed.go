package table

import (
	"encoding/binary"
	"sort"
)

// packBlocks are the most rows of a packed key page that share one base,
// tried in turn: smaller blocks keep offsets of sparser keys in 2 bytes.
var packBlocks = [...]int{64, 32, 16}

// packedKeys is a cached key page whose unpinned key fields are all non-null
// INT, DATE, BIGINT or TIMESTAMP fields. The page splits into segments,
// runs of rows with equal leading fields (all fields but the last), kept
// once per segment; the last field, ascending within a segment, is kept as
// a base per block of up to 64, 32 or 16 rows (blocks start at segment
// starts; the smallest packing wins)
// and each row's offset from its block's base in 2 or 4 bytes. A state
// table's key after its key group packs to a quarter or half of its
// decoded size, also on pages where the key group changes, so the key-page
// cache holds two to four times the pages.
type packedKeys struct {
	types  []DataType
	rows   int
	lead   []int64 // segment s's leading fields: lead[s*(len(types)-1):]
	segs   []int32 // first row of each segment, then rows
	blocks []int32 // first row of each block, then rows
	bases  []int64 // per block
	width  int     // bytes per offset: 2 or 4
	offs   []byte
	last   []byte // the encoded key of the last row
}

// packableVec says whether v holds the first rows of a non-null integer key
// field packKeys may pack: INT or DATE in 4 bytes, BIGINT or TIMESTAMP in 8.
func packableVec(v *colVec, t DataType, rows int) bool {
	if t.Nullable || v.nulls > 0 || len(v.fixed) < rows*v.width {
		return false
	}
	switch {
	case (t.Root == TypeInt || t.Root == TypeDate) && v.width == 4:
	case (t.Root == TypeBigInt || t.Root == TypeTimestamp) && v.width == 8:
	default:
		return false
	}
	return true
}

// packTrial is what packing with one block size would take: its blocks,
// the widest offset from a block's base, and where the current block
// starts.
type packTrial struct {
	blocks int
	span   uint64
	start  int
	base   int64
}

// add counts row i, of last field x, in blocks of up to block rows.
func (tr *packTrial) add(i int, x int64, newSeg bool, block int) {
	if newSeg || i-tr.start == block {
		tr.blocks++
		tr.start, tr.base = i, x
	}
	tr.span = max(tr.span, uint64(x)-uint64(tr.base)) // x ascends within a block
}

// packKeys packs the rows of vecs (the unpinned key fields, of types), or
// returns nil when they do not pack: other field types, nulls, keys not
// ascending, or a block wider than 32 bits. One pass over the rows checks
// their order, marks where segments start and sizes the packing with the
// largest blocks (smaller ones are sized only where that needs 4-byte
// offsets); a last pass builds the smallest packing, its slices allocated
// once at their final sizes (a key page is packed each time it enters the
// key-page cache).
func packKeys(vecs []*colVec, types []DataType, rows int) *packedKeys {
	if len(types) == 0 || rows <= 0 {
		return nil
	}
	for k, t := range types {
		if !packableVec(vecs[k], t, rows) {
			return nil
		}
	}
	nl := len(types) - 1
	lv := vecs[nl]
	var trials [len(packBlocks)]packTrial
	var starts []uint64 // bit i: a segment starts at row i
	if nl > 0 {
		var buf [16]uint64 // 1,024 rows, the pages this package writes
		starts = buf[:]
		if n := (rows + 63) / 64; n > len(buf) {
			starts = make([]uint64, n)
		}
	}
	nseg := 0
	var prev, prevLead int64
	for i := range rows {
		x := fixedInt(lv.fixed, lv.width, i)
		newSeg := i == 0
		if i > 0 {
			c := 0
			switch nl {
			case 0:
			case 1: // a key group before the key, or a pair's first field
				lead := fixedInt(vecs[0].fixed, vecs[0].width, i)
				c, prevLead = cmpInt64(prevLead, lead), lead
			default:
				c = cmpLead(vecs[:nl], i-1, i)
			}
			switch {
			case c > 0:
				return nil
			case c < 0:
				newSeg = true
			case x <= prev:
				return nil
			}
		} else if nl == 1 {
			prevLead = fixedInt(vecs[0].fixed, vecs[0].width, 0)
		}
		if newSeg {
			nseg++
			if nl > 0 {
				starts[i/64] |= 1 << (i % 64)
			}
		}
		trials[0].add(i, x, newSeg, packBlocks[0])
		prev = x
	}
	best, bestSize, width := -1, 0, 0
	for t := range trials {
		if t > 0 {
			// The largest blocks need 4-byte offsets: size smaller ones.
			for i := range rows {
				newSeg := i == 0 || nl > 0 && starts[i/64]&(1<<(i%64)) != 0
				trials[t].add(i, fixedInt(lv.fixed, lv.width, i), newSeg, packBlocks[t])
			}
		}
		tr := trials[t]
		if tr.span >= 1<<32 {
			return nil // smaller blocks, inside these, are no narrower
		}
		w := 2
		if tr.span >= 1<<16 {
			w = 4
		}
		if size := 8*(nl*nseg+tr.blocks) + 4*(nseg+tr.blocks+2) + rows*w; best < 0 || size < bestSize {
			best, bestSize, width = t, size, w
		}
		if w == 2 {
			break // smaller blocks only add bases
		}
	}
	return buildPacked(vecs, types, rows, starts, nseg, trials[best].blocks, packBlocks[best], width)
}

// cmpLead compares the leading fields (vecs) of rows i and j.
func cmpLead(vecs []*colVec, i, j int) int {
	for _, v := range vecs {
		if a, b := fixedInt(v.fixed, v.width, i), fixedInt(v.fixed, v.width, j); a != b {
			return cmpInt64(a, b)
		}
	}
	return 0
}

// buildPacked packs rows that packKeys checked, in nseg segments starting
// at the rows starts marks (all rows one segment when there are no
// leading fields) and nb blocks of up to block rows, with offsets of width
// bytes.
func buildPacked(vecs []*colVec, types []DataType, rows int, starts []uint64, nseg, nb, block, width int) *packedKeys {
	nl := len(types) - 1
	lv := vecs[nl]
	ints := make([]int64, nl*nseg+nb)
	idx := make([]int32, nseg+nb+2)
	pk := &packedKeys{
		types:  types,
		rows:   rows,
		lead:   ints[: 0 : nl*nseg],
		bases:  ints[nl*nseg : nl*nseg : len(ints)],
		segs:   idx[: 0 : nseg+1],
		blocks: idx[nseg+1 : nseg+1 : len(idx)],
		width:  width,
		offs:   make([]byte, rows*width),
	}
	start := 0
	var base int64
	for i := range rows {
		x := fixedInt(lv.fixed, lv.width, i)
		newSeg := i == 0 || nl > 0 && starts[i/64]&(1<<(i%64)) != 0
		if newSeg {
			pk.segs = append(pk.segs, int32(i))
			for _, v := range vecs[:nl] {
				pk.lead = append(pk.lead, fixedInt(v.fixed, v.width, i))
			}
		}
		if newSeg || i-start == block {
			pk.blocks = append(pk.blocks, int32(i))
			pk.bases = append(pk.bases, x)
			start, base = i, x
		}
		if off := uint64(x) - uint64(base); width == 2 {
			binary.LittleEndian.PutUint16(pk.offs[2*i:], uint16(off))
		} else {
			binary.LittleEndian.PutUint32(pk.offs[4*i:], uint32(off))
		}
	}
	pk.segs = append(pk.segs, int32(rows))
	pk.blocks = append(pk.blocks, int32(rows))
	if len(pk.segs) != nseg+1 || len(pk.blocks) != nb+1 {
		panic("packed keys: segments or blocks differ from their count")
	}
	pk.last = pk.appendKey(nil, rows-1)
	return pk
}

func (pk *packedKeys) off(i int) uint64 {
	if pk.width == 2 {
		return uint64(binary.LittleEndian.Uint16(pk.offs[2*i:]))
	}
	return uint64(binary.LittleEndian.Uint32(pk.offs[4*i:]))
}

// upper returns the index of the first entry of s above row r, less one:
// the segment or block holding r.
func upper(s []int32, r int) int {
	return sort.Search(len(s), func(i int) bool { return int(s[i]) > r }) - 1
}

// appendKey appends the order-preserving encoding of row r.
func (pk *packedKeys) appendKey(dst []byte, r int) []byte {
	nl := len(pk.types) - 1
	s := upper(pk.segs, r)
	for k, t := range pk.types[:nl] {
		dst = appendIntKey(dst, t, pk.lead[s*nl+k])
	}
	b := upper(pk.blocks, r)
	return appendIntKey(dst, pk.types[nl], int64(uint64(pk.bases[b])+pk.off(r)))
}

func appendIntKey(dst []byte, t DataType, x int64) []byte {
	if t.Root == TypeInt || t.Root == TypeDate {
		return binary.BigEndian.AppendUint32(dst, uint32(int32(x))^1<<31)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(x)^1<<63)
}

// want decodes an encoded key of the fields into w; ok is false when ks is
// not such a key.
func (pk *packedKeys) want(ks []byte, w []int64) bool {
	for k, t := range pk.types {
		n := 8
		if t.Root == TypeInt || t.Root == TypeDate {
			n = 4
		}
		if len(ks) < n {
			return false
		}
		w[k] = decodeIntKey(ks[:n])
		ks = ks[n:]
	}
	return len(ks) == 0
}

// decodeIntKey decodes the order-preserving encoding of an integer key
// field, 4 or 8 bytes (appendIntKey).
func decodeIntKey(b []byte) int64 {
	if len(b) == 4 {
		return int64(int32(binary.BigEndian.Uint32(b) ^ 1<<31))
	}
	return int64(binary.BigEndian.Uint64(b) ^ 1<<63)
}

// search returns the first row whose key is at least w (one value per
// field), and whether it equals w.
func (pk *packedKeys) search(w []int64) (int, bool) {
	nl := len(pk.types) - 1
	nseg := len(pk.segs) - 1
	// the first segment whose leading fields are at least w's
	s := sort.Search(nseg, func(s int) bool {
		for k := range nl {
			if a := pk.lead[s*nl+k]; a != w[k] {
				return a > w[k]
			}
		}
		return true
	})
	if s == nseg {
		return pk.rows, false
	}
	for k := range nl {
		if pk.lead[s*nl+k] != w[k] {
			return int(pk.segs[s]), false // the segment starts above w
		}
	}
	want := w[nl]
	lo, hi := upper(pk.blocks, int(pk.segs[s])), upper(pk.blocks, int(pk.segs[s+1])-1)+1 // the segment's blocks
	b := lo + sort.Search(hi-lo, func(i int) bool { return pk.bases[lo+i] > want }) - 1
	if b < lo {
		return int(pk.segs[s]), false
	}
	first, end := int(pk.blocks[b]), int(pk.blocks[b+1])
	d := uint64(want) - uint64(pk.bases[b])
	if d >= 1<<(8*pk.width) {
		return end, false // above every row of the block, below the next block's base
	}
	for first < end { // first row of the block with off >= d
		m := int(uint(first+end) >> 1)
		if pk.off(m) < d {
			first = m + 1
		} else {
			end = m
		}
	}
	return first, first < int(pk.blocks[b+1]) && pk.off(first) == d
}

func (pk *packedKeys) memSize() int {
	return 8*cap(pk.lead) + 4*cap(pk.segs) + 4*cap(pk.blocks) + 8*cap(pk.bases) + cap(pk.offs) + cap(pk.last) + 120
}

// packedWant decodes the probe key suffix ks for a packed page into w; ok
// is false when the page is not packed (or ks is not its fields' key).
func (kp *keyPage) packedWant(ks []byte, w []int64) bool {
	return kp.packed != nil && kp.packed.want(ks, w)
}

// intKeyFields says whether every type is one packKeys may pack.
func intKeyFields(types []DataType) bool {
	for _, t := range types {
		switch t.Root {
		case TypeInt, TypeDate, TypeBigInt, TypeTimestamp:
			if t.Nullable {
				return false
			}
		default:
			return false
		}
	}
	return len(types) > 0
}
