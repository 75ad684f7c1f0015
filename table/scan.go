package table

import (
	"bytes"
	"container/heap"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// RecordIterator yields the record batches of a scan.
type RecordIterator interface {
	// Next returns the next non-empty batch, or io.EOF after the last. The
	// caller releases each batch.
	Next() (arrow.Record, error)
	Close() error
}

// thunkIterator produces one batch per step, lazily.
type thunkIterator struct {
	steps []func() (arrow.Record, error)
}

func (it *thunkIterator) Next() (arrow.Record, error) {
	for len(it.steps) > 0 {
		step := it.steps[0]
		it.steps = it.steps[1:]
		rec, err := step()
		if err != nil {
			it.steps = nil
			return nil, err
		}
		if rec != nil && rec.NumRows() > 0 {
			return rec, nil
		}
		if rec != nil {
			rec.Release()
		}
	}
	return nil, io.EOF
}

func (it *thunkIterator) Close() error { it.steps = nil; return nil }

// ScanAll returns every live row: in deletion-vector tables the raw rows of
// the level >= 1 files minus their deletion vectors, file by file; otherwise
// each bucket's runs merged by key (highest sequence number wins, retracted
// keys dropped), in key order per bucket.
func (v *View) ScanAll() (RecordIterator, error) {
	return v.scan(keyRange{}, false)
}

// ScanKeyGroupRange returns the live rows whose key group (the first primary
// key field, an INT) lies in [lo, hi].
func (v *View) ScanKeyGroupRange(lo, hi int32) (RecordIterator, error) {
	t := v.keyTypes[0]
	if t.Root != TypeInt {
		return nil, fmt.Errorf("scan: first key field is %s, not an INT key group", t)
	}
	r := keyRange{lo: appendKeyDatum(nil, t, IntDatum(int64(lo)))}
	if hi < math.MaxInt32 {
		r.hi = appendKeyDatum(nil, t, IntDatum(int64(hi)+1))
	}
	if lo > hi {
		return &thunkIterator{}, nil
	}
	return v.scan(r, false)
}

// ScanPrefixRange returns, in key order, the live rows whose leading key
// fields equal prefix and whose next key field lies in [lo, hi); a null lo
// or hi leaves that side open. With the prefix covering the bucket key (as
// [kg, key] does for a time-ordered store) it reads one bucket.
func (v *View) ScanPrefixRange(prefix []Datum, lo, hi Datum) (RecordIterator, error) {
	if len(prefix) >= len(v.keyTypes) {
		return nil, fmt.Errorf("scan: prefix of %d fields leaves no range field in a key of %d", len(prefix), len(v.keyTypes))
	}
	p := AppendKeyDatums(nil, v.keyTypes[:len(prefix)], prefix)
	t := v.keyTypes[len(prefix)]
	r := keyRange{lo: p, hi: p, hiIncl: true}
	if !lo.Null {
		r.lo = appendKeyDatum(bytes.Clone(p), t, lo)
	}
	if !hi.Null {
		r.hi, r.hiIncl = appendKeyDatum(bytes.Clone(p), t, hi), false
	}
	return v.scan(r, true)
}

func (v *View) scan(r keyRange, ordered bool) (RecordIterator, error) {
	it := &thunkIterator{}
	for _, bk := range v.order {
		b := v.buckets[bk]
		if v.dv && !ordered {
			for _, run := range b.runs {
				for _, f := range run.files {
					if r.overlaps(f.minKey, f.maxKey) {
						it.steps = append(it.steps, func() (arrow.Record, error) { return v.readLive(f, r) })
					}
				}
			}
			continue
		}
		it.steps = append(it.steps, func() (arrow.Record, error) { return v.readMerged(b, r) })
	}
	return it, nil
}

// fileSlice is the rows of one file within a key range, decoded.
type fileSlice struct {
	f     *viewFile
	first int64 // file position of row 0
	vecs  []*colVec
	seqs  []int64
	kinds []ValueKind
}

func (v *View) readSlice(f *viewFile, r keyRange) (*fileSlice, error) {
	df, err := v.open(f)
	if err != nil {
		return nil, err
	}
	a, b, err := df.rowRange(r)
	if err != nil || a == b {
		return nil, err
	}
	var c rowChunk
	if err := df.readChunk(a, b, &c); err != nil {
		return nil, err
	}
	return &fileSlice{f: f, first: a, vecs: c.fields, seqs: c.seqs, kinds: c.kinds}, nil
}

func (s *fileSlice) live(i int) bool {
	return (s.f.dv == nil || !s.f.dv.Contains(uint32(s.first+int64(i)))) && !s.kinds[i].IsRetract()
}

// readLive reads a standalone-correct file's rows in range minus deleted and
// retracted rows.
func (v *View) readLive(f *viewFile, r keyRange) (arrow.Record, error) {
	s, err := v.readSlice(f, r)
	if err != nil || s == nil {
		return nil, err
	}
	n := len(s.seqs)
	var sel []int32
	for i := 0; i < n; i++ {
		if s.live(i) {
			sel = append(sel, int32(i))
		}
	}
	if len(sel) == n {
		return vecsRecord(v.schema, s.vecs)
	}
	outs := make([]*colVec, len(s.vecs))
	for i, src := range s.vecs {
		outs[i] = newColVec(src.t)
		outs[i].gather(src, sel)
	}
	return vecsRecord(v.schema, outs)
}

// readMerged merges a bucket's runs within a key range in key order: per
// key the row with the highest sequence number wins and a retraction drops
// the key; rows masked by deletion vectors never take part.
func (v *View) readMerged(b *viewBucket, r keyRange) (arrow.Record, error) {
	var slices []*fileSlice
	var keys []sliceKeys
	for _, run := range b.runs {
		for _, f := range run.files {
			if !r.overlaps(f.minKey, f.maxKey) {
				continue
			}
			s, err := v.readSlice(f, r)
			if err != nil {
				return nil, err
			}
			if s == nil {
				continue
			}
			slices = append(slices, s)
			keys = append(keys, v.encodeSliceKeys(s))
		}
	}
	outs := make([]*colVec, len(v.schema.Fields))
	for i, f := range v.schema.Fields {
		outs[i] = newColVec(f.Type)
	}
	h := &sliceHeap{keys: keys}
	for si, s := range slices {
		if c := nextDVLive(s, 0); c < len(s.seqs) {
			h.items = append(h.items, sliceCursor{slice: si, row: c})
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		top := h.items[0]
		key := keys[top.slice].key(top.row)
		best := top
		for h.Len() > 0 && bytes.Equal(keys[h.items[0].slice].key(h.items[0].row), key) {
			c := h.items[0]
			if slices[c.slice].seqs[c.row] > slices[best.slice].seqs[best.row] {
				best = c
			}
			if nxt := nextDVLive(slices[c.slice], c.row+1); nxt < len(slices[c.slice].seqs) {
				h.items[0].row = nxt
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		}
		s := slices[best.slice]
		if s.kinds[best.row].IsRetract() {
			continue
		}
		for i := range outs {
			outs[i].appendRow(s.vecs[i], best.row)
		}
	}
	return vecsRecord(v.schema, outs)
}

// nextDVLive is the first row at or after i not masked by a deletion vector.
func nextDVLive(s *fileSlice, i int) int {
	for i < len(s.seqs) && s.f.dv != nil && s.f.dv.Contains(uint32(s.first+int64(i))) {
		i++
	}
	return i
}

// sliceKeys are the encoded keys of a slice's rows, packed.
type sliceKeys struct {
	buf  []byte
	offs []int32
}

func (k sliceKeys) key(i int) []byte { return k.buf[k.offs[i]:k.offs[i+1]] }

func (v *View) encodeSliceKeys(s *fileSlice) sliceKeys {
	n := len(s.seqs)
	k := sliceKeys{offs: make([]int32, 1, n+1)}
	for i := 0; i < n; i++ {
		for j, fi := range v.keyIdx {
			k.buf = s.vecs[fi].appendKey(k.buf, v.keyTypes[j], i)
		}
		k.offs = append(k.offs, int32(len(k.buf)))
	}
	return k
}

type sliceCursor struct{ slice, row int }

// sliceHeap orders cursors by key, then by slice so equal keys pop together.
type sliceHeap struct {
	items []sliceCursor
	keys  []sliceKeys
}

func (h *sliceHeap) Len() int { return len(h.items) }
func (h *sliceHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if c := bytes.Compare(h.keys[a.slice].key(a.row), h.keys[b.slice].key(b.row)); c != 0 {
		return c < 0
	}
	return a.slice < b.slice
}
func (h *sliceHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *sliceHeap) Push(x any)    { h.items = append(h.items, x.(sliceCursor)) }
func (h *sliceHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
