package table

import (
	"bytes"
	"sort"
)

// prefixRanges appends to out, for each prefix (the encoded leading key
// fields, ascending and distinct), the file rows [a, b) whose keys start
// with it. It is one pass over the key pages: page bounds skip pages, a
// decoded page serves every prefix that falls in it, and the pages that may
// hold a prefix are read ahead together.
func (d *DataFile) prefixRanges(prefixes [][]byte, out [][2]int64) (_ [][2]int64, err error) {
	defer guard(d.path, &err)
	pages := d.keyPages()
	sc := probeScratchPool.Get().(*probeScratch)
	defer probeScratchPool.Put(sc)
	sc.prepare(d.keyTypes)
	kr := d.newKeyPageReader(pages, prefixes, false)
	defer kr.close()
	decoded, rows := -1, 0
	rowKey := func(r int) []byte {
		sc.enc = sc.enc[:0]
		for k, t := range d.keyTypes {
			sc.enc = sc.keyVecs[k].appendKey(sc.enc, t, r)
		}
		return sc.enc
	}
	// first returns the first row from page *p on for which below is false
	// (below is true, then false, along the file), leaving *p at its page;
	// skip says a page's every row is below.
	first := func(p *int, below func(k []byte) bool, skip func(pb *pageBound) bool) (int64, error) {
		for ; *p < len(pages); *p++ {
			pb := &pages[*p]
			if skip(pb) {
				continue
			}
			if decoded != *p {
				if err := kr.read(*p, 0, sc.keyVecs); err != nil {
					return 0, err
				}
				decoded, rows = *p, int(pb.span.end-pb.span.first)
			}
			if i := sort.Search(rows, func(x int) bool { return !below(rowKey(x)) }); i < rows {
				return pb.span.first + int64(i), nil
			}
		}
		return d.numRows, nil
	}
	p := 0
	for _, k := range prefixes {
		r := keyRange{lo: k, hi: k, hiIncl: true}
		a, err := first(&p, r.below, func(pb *pageBound) bool {
			return pb.hi != nil && bytes.Compare(pb.hi, k[:min(len(k), len(pb.hi))]) < 0
		})
		if err != nil {
			return out, err
		}
		b, err := first(&p, func(key []byte) bool { return !r.beyond(key) }, func(pb *pageBound) bool {
			// every row of the page starts with k or lies below it
			if pb.hi == nil {
				return false
			}
			if len(pb.hi) >= len(k) {
				return bytes.Compare(pb.hi[:len(k)], k) <= 0
			}
			return bytes.Compare(pb.hi, k[:len(pb.hi)]) < 0
		})
		if err != nil {
			return out, err
		}
		out = append(out, [2]int64{a, max(a, b)})
	}
	return out, nil
}
