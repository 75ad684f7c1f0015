package table

import (
	"bytes"
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
	key   []byte      // cur's key, valid until the next advance
	level int32       // level of the current file
	order int         // position among the merged runs, for stable ties
	prev  []byte      // the previous key, to check that keys ascend
	// A bounded run yields only the keys k with after < k <= upTo (encoded;
	// nil: unbounded) and records, per file, the positions it yielded.
	bounded     bool
	after, upTo []byte
	taken       []takenRows
}

// takenRows are the positions [first, last] of a file a bounded run
// yielded. Rows between them that it did not yield were already deleted:
// a file holds its keys in position order.
type takenRows struct {
	file        string
	first, last int64
}

// advance moves to the next row, opening files as needed; false at the end.
func (r *runIterator) advance() (bool, error) {
	for {
		if r.cur != nil {
			if r.cur.Next() {
				r.key = r.cur.Key()
				if !r.bounded {
					return true, nil
				}
				if r.after != nil && bytes.Compare(r.key, r.after) <= 0 {
					continue
				}
				if r.upTo != nil && bytes.Compare(r.key, r.upTo) > 0 {
					// Past the bounds: the run's later files start later still.
					r.close()
					r.next = len(r.run)
					return false, nil
				}
				r.take(r.cur.Pos())
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
		var it RowIterator
		var err error
		if r.bounded {
			it, err = r.files.OpenRange(f, r.dvs[f.FileName], r.after, r.upTo)
		} else {
			it, err = r.files.Open(f, r.dvs[f.FileName])
		}
		if err != nil {
			return false, fmt.Errorf("open %s: %w", f.FileName, err)
		}
		r.cur, r.level = it, f.Level
		r.next++
	}
}

// take records that the current file's row at pos was yielded.
func (r *runIterator) take(pos int64) {
	name := r.run[r.next-1].FileName
	if n := len(r.taken); n > 0 && r.taken[n-1].file == name {
		r.taken[n-1].last = pos
		return
	}
	r.taken = append(r.taken, takenRows{file: name, first: pos, last: pos})
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
	m.h.init()
	return m, nil
}

// nextGroup advances past the previous group and returns the runs positioned
// at the next smallest key (nil at the end). A run whose keys do not ascend
// strictly is an error: the file is corrupt or its run overlaps.
func (m *kwayMerge) nextGroup() ([]*runIterator, error) {
	for _, r := range m.group {
		r.prev = append(r.prev[:0], r.key...)
		ok, err := r.advance()
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if bytes.Compare(r.prev, r.key) >= 0 {
			return nil, fmt.Errorf("run of %s: keys do not ascend at position %d of %s",
				r.run[0].FileName, r.cur.Pos(), r.run[r.next-1].FileName)
		}
		m.h.push(r)
	}
	m.group = m.group[:0]
	if len(m.h) == 0 {
		return nil, nil
	}
	first := m.h.pop()
	m.group = append(m.group, first)
	for len(m.h) > 0 && bytes.Equal(m.h[0].key, first.key) {
		m.group = append(m.group, m.h.pop())
	}
	return m.group, nil
}

// bound is the smallest current key of the runs outside the last group,
// nil when there is none: the key below which the group's runs go on alone.
func (m *kwayMerge) bound() []byte {
	if len(m.h) == 0 {
		return nil
	}
	return m.h[0].key
}

func (m *kwayMerge) close() {
	for _, r := range m.all {
		r.close()
	}
}

// mergeHeap is a min-heap of runs by current key, then merge order.
type mergeHeap []*runIterator

func (h mergeHeap) less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].order < h[j].order
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(r *runIterator) {
	*h = append(*h, r)
	h.up(len(*h) - 1)
}

func (h *mergeHeap) pop() *runIterator {
	old := *h
	n := len(old) - 1
	top := old[0]
	old[0], old[n] = old[n], nil
	*h = old[:n]
	h.down(0)
	return top
}

func (h mergeHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h mergeHeap) down(i int) {
	for {
		min, l := i, 2*i+1
		if l < len(h) && h.less(l, min) {
			min = l
		}
		if r := l + 1; r < len(h) && h.less(r, min) {
			min = r
		}
		if min == i {
			return
		}
		h[i], h[min] = h[min], h[i]
		i = min
	}
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
