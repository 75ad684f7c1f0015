package table

import (
	"fmt"
	"slices"
)

// SortedRun is data files with disjoint key ranges, ordered by min key.
type SortedRun struct {
	Files []DataFileMeta
}

// NewSortedRun orders files by min key and checks that no two overlap.
func NewSortedRun(cmp KeyComparator, files []DataFileMeta) (SortedRun, error) {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b DataFileMeta) int { return cmp(a.MinKey, b.MinKey) })
	for i := 1; i < len(files); i++ {
		if cmp(files[i].MinKey, files[i-1].MaxKey) <= 0 {
			return SortedRun{}, fmt.Errorf("files %s and %s overlap", files[i-1].FileName, files[i].FileName)
		}
	}
	return SortedRun{Files: files}, nil
}

// TotalSize sums the run's file sizes.
func (r SortedRun) TotalSize() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.FileSize
	}
	return n
}

// LevelSortedRun is a sorted run and the level it lives on.
type LevelSortedRun struct {
	Level int
	Run   SortedRun
}
