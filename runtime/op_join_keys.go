package runtime

import (
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// distinctKeys gathers the records of a batch by state key: the distinct
// keys in order of first appearance, and per record the index of its key
// among them. A join reads both sides' entries of every key of a batch, and
// a batch of bids names a few hundred auctions in thousands of records: the
// states then encode and look up each distinct key once, where a record
// costs one probe of a small table here.
type distinctKeys struct {
	spec keySpec
	// span: the key columns are consecutive and ascending, so a key's
	// columns are a slice of its row.
	span bool
	// strs marks key columns that hash by their string.
	strs  []bool
	keys  []subtask.Key
	index []int32
	// table is open addressing over the keys of the batch: at a slot, one
	// plus the index of a key, 0 when free. Its length is a power of two,
	// at least twice the records of any batch so far. at is each key's
	// slot, so that the next batch frees only those.
	table  []int32
	at     []int32
	hashes []uint64
	flat   []Datum
}

// hashSeed makes the string hashes of distinct keys; a process's seed is
// as good as any, since the table lives for one batch.
var hashSeed = maphash.MakeSeed()

func newDistinctKeys(spec keySpec) *distinctKeys {
	d := &distinctKeys{spec: spec, span: consecutive(spec.cols), strs: make([]bool, len(spec.cols))}
	for i, t := range spec.types {
		d.strs[i] = t.Root == table.TypeString || t.Root == table.TypeBytes
	}
	return d
}

// of returns the distinct keys of recs and, per record, the index of its
// key; both stay valid until the next call.
func (d *distinctKeys) of(recs []Record) ([]subtask.Key, []int32, error) {
	for _, at := range d.at {
		d.table[at] = 0
	}
	d.keys, d.index, d.at, d.hashes = d.keys[:0], d.index[:0], d.at[:0], d.hashes[:0]
	d.flat = d.flat[:0]
	if want := 2 * len(recs); len(d.table) < want {
		d.table = make([]int32, 1<<bits.Len(uint(want-1)))
	}
	shift := 64 - bits.Len(uint(len(d.table)-1))
	mask := len(d.table) - 1
	n := len(d.spec.cols)
	for _, r := range recs {
		if r.KeyGroup < 0 {
			return nil, nil, fmt.Errorf("record without key group reached a keyed operator")
		}
		h := uint64(uint32(r.KeyGroup))
		for i, c := range d.spec.cols {
			v := r.Row[c]
			if v.IsNull() {
				return nil, nil, fmt.Errorf("NULL in key columns %v", d.spec.cols)
			}
			var x uint64
			if d.strs[i] {
				x = maphash.String(hashSeed, v.Str())
			} else {
				hi, lo := v.Decimal()
				x = lo ^ uint64(hi)*0xff51afd7ed558ccd
			}
			h = (h ^ x) * 0x9e3779b97f4a7c15
		}
		slot := int(h >> shift)
		for {
			k := d.table[slot] - 1
			if k < 0 {
				k = int32(len(d.keys))
				d.table[slot] = k + 1
				d.at = append(d.at, int32(slot))
				d.hashes = append(d.hashes, h)
				d.keys = append(d.keys, subtask.Key{Group: r.KeyGroup, Cols: d.cols(r.Row, n)})
				d.index = append(d.index, k)
				break
			}
			if key := &d.keys[k]; d.hashes[k] == h && key.Group == r.KeyGroup && d.equal(key.Cols, r.Row) {
				d.index = append(d.index, k)
				break
			}
			slot = (slot + 1) & mask
		}
	}
	if !d.span {
		// flat may have moved while growing: re-slice every key into it.
		for i := range d.keys {
			d.keys[i].Cols = d.flat[i*n : (i+1)*n : (i+1)*n]
		}
	}
	return d.keys, d.index, nil
}

// cols returns the key columns of a row: a slice of it, or a copy in flat.
func (d *distinctKeys) cols(r Row, n int) Row {
	if d.span {
		at := d.spec.cols[0]
		return r[at : at+n : at+n]
	}
	at := len(d.flat)
	for _, c := range d.spec.cols {
		d.flat = append(d.flat, r[c])
	}
	return d.flat[at : at+n : at+n]
}

// equal reports whether key columns cols are those of row r.
func (d *distinctKeys) equal(cols, r Row) bool {
	for i, c := range d.spec.cols {
		if cols[i] != r[c] {
			return false
		}
	}
	return true
}
