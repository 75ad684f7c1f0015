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

// intField appends the values of the first rows of a vector of an integer
// key field to dst; ok is false for other fields.
func intField(dst []int64, v *colVec, t DataType, rows int) (_ []int64, ok bool) {
	if t.Nullable || v.nulls > 0 || len(v.fixed) < rows*v.width {
		return dst, false
	}
	switch {
	case (t.Root == TypeInt || t.Root == TypeDate) && v.width == 4:
	case (t.Root == TypeBigInt || t.Root == TypeTimestamp) && v.width == 8:
	default:
		return dst, false
	}
	for i := range rows {
		dst = append(dst, fixedInt(v.fixed, v.width, i))
	}
	return dst, true
}

// packKeys packs the rows of vecs (the unpinned key fields, of types), or
// returns nil when they do not pack: other field types, nulls, keys not
// ascending, or a block wider than 32 bits.
func packKeys(vecs []*colVec, types []DataType, rows int) *packedKeys {
	if len(types) == 0 || rows <= 0 {
		return nil
	}
	vals := make([]int64, 0, rows*len(types)) // field k's rows at vals[k*rows:]
	for k, t := range types {
		var ok bool
		if vals, ok = intField(vals, vecs[k], t, rows); !ok {
			return nil
		}
	}
	var best *packedKeys
	for _, n := range packBlocks {
		pk := packKeysIn(vals, types, rows, n)
		if pk == nil {
			return nil // no block size changes why
		}
		if best == nil || pk.memSize() < best.memSize() {
			best = pk
		}
		if pk.width == 2 {
			break // smaller blocks only add bases
		}
	}
	return best
}

// packKeysIn is packKeys of the fields' values with blocks of up to block
// rows.
func packKeysIn(vals []int64, types []DataType, rows, block int) *packedKeys {
	nl := len(types) - 1
	last := vals[nl*rows : (nl+1)*rows]
	// cmpLead compares the leading fields of rows i and j.
	cmpLead := func(i, j int) int {
		for k := range nl {
			if a, b := vals[k*rows+i], vals[k*rows+j]; a != b {
				return cmpInt64(a, b)
			}
		}
		return 0
	}
	pk := &packedKeys{types: types, rows: rows, width: 2}
	for i := range rows {
		newSeg := i == 0
		if i > 0 {
			c := 0
			if nl > 0 {
				c = cmpLead(i-1, i)
			}
			switch {
			case c > 0:
				return nil
			case c < 0:
				newSeg = true
			case last[i] <= last[i-1]:
				return nil
			}
		}
		if newSeg {
			pk.segs = append(pk.segs, int32(i))
			for k := range nl {
				pk.lead = append(pk.lead, vals[k*rows+i])
			}
		}
		if newSeg || i-int(pk.blocks[len(pk.blocks)-1]) == block {
			pk.blocks = append(pk.blocks, int32(i))
			pk.bases = append(pk.bases, last[i])
		}
		if span := uint64(last[i]) - uint64(pk.bases[len(pk.bases)-1]); span >= 1<<32 {
			return nil
		} else if span >= 1<<16 {
			pk.width = 4
		}
	}
	pk.segs = append(pk.segs, int32(rows))
	pk.blocks = append(pk.blocks, int32(rows))
	pk.offs = make([]byte, rows*pk.width)
	b := 0
	for i := range rows {
		if int(pk.blocks[b+1]) == i {
			b++
		}
		off := uint64(last[i]) - uint64(pk.bases[b])
		if pk.width == 2 {
			binary.LittleEndian.PutUint16(pk.offs[2*i:], uint16(off))
		} else {
			binary.LittleEndian.PutUint32(pk.offs[4*i:], uint32(off))
		}
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
