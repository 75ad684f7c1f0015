package table

import (
	"container/heap"
	"slices"
)

// partitionSections splits files into sections whose key ranges do not
// overlap one another, and each section into the fewest sorted runs, the way
// Paimon's IntervalPartition does: a compaction merges within a section only.
func partitionSections(cmp KeyComparator, files []DataFileMeta) [][]SortedRun {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b DataFileMeta) int {
		if c := cmp(a.MinKey, b.MinKey); c != 0 {
			return c
		}
		return cmp(a.MaxKey, b.MaxKey)
	})
	var sections [][]SortedRun
	start := 0
	var bound []byte
	for i, f := range files {
		if i > start && cmp(f.MinKey, bound) > 0 {
			sections = append(sections, sectionRuns(cmp, files[start:i]))
			start, bound = i, nil
		}
		if bound == nil || cmp(f.MaxKey, bound) > 0 {
			bound = f.MaxKey
		}
	}
	if start < len(files) {
		sections = append(sections, sectionRuns(cmp, files[start:]))
	}
	return sections
}

// sectionRuns packs files sorted by min key into the fewest sorted runs:
// each file joins the run that ends with the smallest max key if it starts
// after it, else opens a new run. Runs come out in the order they opened.
func sectionRuns(cmp KeyComparator, files []DataFileMeta) []SortedRun {
	var runs []SortedRun
	h := &runEnds{cmp: cmp, runs: &runs}
	for _, f := range files {
		if h.Len() > 0 && cmp(f.MinKey, h.last(h.idx[0]).MaxKey) > 0 {
			r := h.idx[0]
			runs[r].Files = append(runs[r].Files, f)
			heap.Fix(h, 0)
			continue
		}
		runs = append(runs, SortedRun{Files: []DataFileMeta{f}})
		heap.Push(h, len(runs)-1)
	}
	return runs
}

// runEnds is a min-heap of run indexes by the max key of each run's last file.
type runEnds struct {
	cmp  KeyComparator
	runs *[]SortedRun
	idx  []int
}

func (h *runEnds) last(r int) DataFileMeta {
	files := (*h.runs)[r].Files
	return files[len(files)-1]
}
func (h *runEnds) Len() int { return len(h.idx) }
func (h *runEnds) Less(i, j int) bool {
	return h.cmp(h.last(h.idx[i]).MaxKey, h.last(h.idx[j]).MaxKey) < 0
}
func (h *runEnds) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *runEnds) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *runEnds) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
