package table

import (
	"bytes"
	"sort"
)

// keyRange selects encoded keys k with lo <= k (nil lo: unbounded) and
// k[:len(hi)] < hi, or <= hi when hiIncl (nil hi: unbounded). A prefix hi
// with hiIncl selects every key that starts with it.
type keyRange struct {
	lo, hi []byte
	hiIncl bool
}

func (r keyRange) below(k []byte) bool { return r.lo != nil && bytes.Compare(k, r.lo) < 0 }

func (r keyRange) beyond(k []byte) bool {
	if r.hi == nil {
		return false
	}
	c := bytes.Compare(k[:min(len(k), len(r.hi))], r.hi)
	return c > 0 || c == 0 && !r.hiIncl
}

func (r keyRange) overlaps(minKey, maxKey []byte) bool {
	return !r.beyond(minKey) && !r.below(maxKey)
}

// rowRange finds the file rows [a,b) whose keys lie in r, decoding only the
// key pages at the range's edges.
func (d *DataFile) rowRange(r keyRange) (a, b int64, err error) {
	defer guard(d.path, &err)
	if r.lo == nil && r.hi == nil {
		return 0, d.numRows, nil
	}
	pages := d.keyPages()
	sc := probeScratchPool.Get().(*probeScratch)
	defer probeScratchPool.Put(sc)
	sc.prepare(d.keyTypes)
	// first row where pred holds; pred is false then true along the file.
	first := func(pred func(k []byte) bool, skip func(pb *pageBound) bool) (int64, error) {
		for p := range pages {
			pb := &pages[p]
			if skip(pb) {
				continue
			}
			for c, col := range d.keyCols {
				sc.keyVecs[c].reset()
				if err := d.readRange(col, pb.span.first, pb.span.end, sc.keyVecs[c]); err != nil {
					return 0, err
				}
			}
			rows := int(pb.span.end - pb.span.first)
			i := sort.Search(rows, func(x int) bool {
				sc.enc = sc.enc[:0]
				for k, t := range d.keyTypes {
					sc.enc = sc.keyVecs[k].appendKey(sc.enc, t, x)
				}
				return pred(sc.enc)
			})
			if i < rows {
				return pb.span.first + int64(i), nil
			}
		}
		return d.numRows, nil
	}
	a, b = 0, d.numRows
	if r.lo != nil {
		// skip pages whose every key is below lo
		if a, err = first(func(k []byte) bool { return !r.below(k) }, func(pb *pageBound) bool {
			return pb.hi != nil && bytes.Compare(pb.hi, r.lo[:min(len(r.lo), len(pb.hi))]) < 0
		}); err != nil {
			return 0, 0, err
		}
	}
	if r.hi != nil {
		// skip pages whose every key is within hi
		if b, err = first(r.beyond, func(pb *pageBound) bool {
			if pb.span.end <= a || pb.hi == nil || len(pb.hi) < len(r.hi) {
				return pb.span.end <= a
			}
			c := bytes.Compare(pb.hi[:len(r.hi)], r.hi)
			return c < 0 || c == 0 && r.hiIncl
		}); err != nil {
			return 0, 0, err
		}
	}
	return a, max(a, b), nil
}
