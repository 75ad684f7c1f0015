package table

import (
	"encoding/binary"
	"sort"
)

// packBlock is the rows of a packed key page that share one base.
const packBlock = 64

// packedKeys is a cached key page whose one unpinned key field is a non-null
// INT, DATE, BIGINT or TIMESTAMP (ascending, as the page's keys are): a base
// per block of packBlock rows and each row's offset from its block's base in
// 2 or 4 bytes. A state table's key after its pinned key group packs to a
// quarter or half of its decoded size, so the key-page cache holds two to
// four times the pages.
type packedKeys struct {
	t     DataType
	rows  int
	width int // bytes per offset: 2 or 4
	bases []int64
	offs  []byte
}

// packKeys packs the rows of v, or returns nil when they do not pack: not
// such a field, nulls, not ascending, or a block wider than 32 bits.
func packKeys(v *colVec, t DataType, rows int) *packedKeys {
	if t.Nullable || v.nulls > 0 || rows <= 0 || len(v.fixed) < rows*v.width {
		return nil
	}
	var at func(i int) int64
	switch {
	case (t.Root == TypeInt || t.Root == TypeDate) && v.width == 4:
		at = func(i int) int64 { return int64(int32(binary.LittleEndian.Uint32(v.fixed[4*i:]))) }
	case (t.Root == TypeBigInt || t.Root == TypeTimestamp) && v.width == 8:
		at = func(i int) int64 { return int64(binary.LittleEndian.Uint64(v.fixed[8*i:])) }
	default:
		return nil
	}
	pk := &packedKeys{t: t, rows: rows, width: 2}
	for lo := 0; lo < rows; lo += packBlock {
		hi := min(rows, lo+packBlock)
		for i := lo + 1; i < hi; i++ {
			if at(i) <= at(i-1) {
				return nil
			}
		}
		if lo > 0 && at(lo) <= at(lo-1) {
			return nil
		}
		switch span := uint64(at(hi-1)) - uint64(at(lo)); {
		case span >= 1<<32:
			return nil
		case span >= 1<<16:
			pk.width = 4
		}
	}
	pk.bases = make([]int64, 0, (rows+packBlock-1)/packBlock)
	pk.offs = make([]byte, rows*pk.width)
	for i := range rows {
		if i%packBlock == 0 {
			pk.bases = append(pk.bases, at(i))
		}
		off := uint64(at(i)) - uint64(pk.bases[i/packBlock])
		if pk.width == 2 {
			binary.LittleEndian.PutUint16(pk.offs[2*i:], uint16(off))
		} else {
			binary.LittleEndian.PutUint32(pk.offs[4*i:], uint32(off))
		}
	}
	return pk
}

func (pk *packedKeys) off(i int) uint64 {
	if pk.width == 2 {
		return uint64(binary.LittleEndian.Uint16(pk.offs[2*i:]))
	}
	return uint64(binary.LittleEndian.Uint32(pk.offs[4*i:]))
}

func (pk *packedKeys) at(i int) int64 {
	return int64(uint64(pk.bases[i/packBlock]) + pk.off(i))
}

// appendKey appends the order-preserving encoding of row r.
func (pk *packedKeys) appendKey(dst []byte, r int) []byte {
	if pk.t.Root == TypeInt || pk.t.Root == TypeDate {
		return binary.BigEndian.AppendUint32(dst, uint32(int32(pk.at(r)))^1<<31)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(pk.at(r))^1<<63)
}

// want decodes an encoded key of the field; ok is false for other lengths.
func (pk *packedKeys) want(ks []byte) (int64, bool) {
	if pk.t.Root == TypeInt || pk.t.Root == TypeDate {
		if len(ks) != 4 {
			return 0, false
		}
		return int64(int32(binary.BigEndian.Uint32(ks) ^ 1<<31)), true
	}
	if len(ks) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(ks) ^ 1<<63), true
}

// search returns the first row whose value is at least want, and whether
// it equals want.
func (pk *packedKeys) search(want int64) (int, bool) {
	b := sort.Search(len(pk.bases), func(i int) bool { return pk.bases[i] > want }) - 1
	if b < 0 {
		return 0, false
	}
	lo, hi := b*packBlock, min(pk.rows, (b+1)*packBlock)
	d := uint64(want) - uint64(pk.bases[b])
	if d >= 1<<(8*pk.width) {
		return hi, false // above every row of the block, below the next block's base
	}
	for lo < hi { // first row of the block with off >= d
		m := int(uint(lo+hi) >> 1)
		if pk.off(m) < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < pk.rows && lo < (b+1)*packBlock && pk.off(lo) == d
}

func (pk *packedKeys) memSize() int { return 8*cap(pk.bases) + cap(pk.offs) + 64 }

// packedWant decodes the probe key suffix ks for a packed page; ok is false
// when the page is not packed (or ks is not one encoded field).
func (kp *keyPage) packedWant(ks []byte) (int64, bool) {
	if kp.packed == nil {
		return 0, false
	}
	return kp.packed.want(ks)
}
