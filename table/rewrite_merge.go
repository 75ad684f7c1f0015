package table

import (
	"bytes"
	"container/heap"
	"fmt"
)

// runIterator reads the files of one sorted run one after another, with
// their deletion vectors applied.
type runIterator struct {
	files BucketFiles
	run   []DataFileMeta
	dvs   DeletionVectors
	next  int         // index in run of the file after cur
	cur   RowIterator // nil before the first file and after the last
	level int32       // level of the current file
	order int         // position among the merged runs, for stable ties
	prev  []byte      // the previous key, to check that keys ascend
}

// advance moves to the next row, opening files as needed; false at the end.
func (r *runIterator) advance() (bool, error) {
	for {
		if r.cur != nil {
			if r.cur.Next() {
				return true, nil
			}
			err := r.cur.Err()
			if cerr := r.cur.Close(); err == nil {
				err = cerr
			}
			r.cur = nil
			if err != nil {
				return false, fmt.Errorf("read %s: %w", r.run[r.next-1].FileName, err)
			}
		}
		if r.next == len(r.run) {
			return false, nil
		}
		f := r.run[r.next]
		it, err := r.files.Open(f, r.dvs[f.FileName])
		if err != nil {
			return false, fmt.Errorf("open %s: %w", f.FileName, err)
		}
		r.cur, r.level = it, f.Level
		r.next++
	}
}

func (r *runIterator) close() {
	if r.cur != nil {
		_ = r.cur.Close()
		r.cur = nil
	}
}

// kwayMerge merges sorted runs by key; each run holds a key at most once, so
// a key's rows come from distinct runs.
type kwayMerge struct {
	h     mergeHeap
	group []*runIterator
	all   []*runIterator
}

func newKWayMerge(runs []*runIterator) (*kwayMerge, error) {
	m := &kwayMerge{all: runs}
	for i, r := range runs {
		r.order = i
		ok, err := r.advance()
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.h = append(m.h, r)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// nextGroup advances past the previous group and returns the runs positioned
// at the next smallest key (nil at the end). A run whose keys do not ascend
// strictly is an error: the file is corrupt or its run overlaps.
func (m *kwayMerge) nextGroup() ([]*runIterator, error) {
	for _, r := range m.group {
		r.prev = append(r.prev[:0], r.cur.Key()...)
		ok, err := r.advance()
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if bytes.Compare(r.prev, r.cur.Key()) >= 0 {
			return nil, fmt.Errorf("run of %s: keys do not ascend at position %d of %s",
				r.run[0].FileName, r.cur.Pos(), r.run[r.next-1].FileName)
		}
		heap.Push(&m.h, r)
	}
	m.group = m.group[:0]
	if len(m.h) == 0 {
		return nil, nil
	}
	first := heap.Pop(&m.h).(*runIterator)
	m.group = append(m.group, first)
	for len(m.h) > 0 && bytes.Equal(m.h[0].cur.Key(), first.cur.Key()) {
		m.group = append(m.group, heap.Pop(&m.h).(*runIterator))
	}
	return m.group, nil
}

func (m *kwayMerge) close() {
	for _, r := range m.all {
		r.close()
	}
}

type mergeHeap []*runIterator

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cur.Key(), h[j].cur.Key()); c != 0 {
		return c < 0
	}
	return h[i].order < h[j].order
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*runIterator)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// newestOf picks the row a deduplicating merge keeps: the highest sequence
// number; on a tie the shallower level, then the earlier run.
func newestOf(group []*runIterator) *runIterator {
	best := group[0]
	for _, r := range group[1:] {
		bs, rs := best.cur.Seq(), r.cur.Seq()
		if rs > bs || (rs == bs && (r.level < best.level || (r.level == best.level && r.order < best.order))) {
			best = r
		}
	}
	return best
}
