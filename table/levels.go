package table

import (
	"fmt"
	"slices"
)

// KeyComparator orders two serialized trimmed-primary-key BinaryRows (the
// form of DataFileMeta.MinKey/MaxKey) the way Paimon's key comparator does.
type KeyComparator func(a, b []byte) int

// Levels is the LSM tree of one (partition, bucket): level 0 holds files that
// may overlap, each its own sorted run, newest first; every level >= 1 is one
// sorted run of files with disjoint key ranges. It is a plain value mutated
// only through Apply, so a compactor can keep it across rounds.
type Levels struct {
	cmp    KeyComparator
	level0 []DataFileMeta // ordered by level0Before
	upper  []SortedRun    // upper[i] is level i+1
}

// NewLevels builds the tree from a bucket's live files. numLevels is the
// configured level count; a restored file at a deeper level widens it, as
// Paimon does for tables written with another num-levels.
func NewLevels(cmp KeyComparator, files []DataFileMeta, numLevels int) (*Levels, error) {
	for _, f := range files {
		if f.Level < 0 {
			return nil, fmt.Errorf("levels: file %s has negative level %d", f.FileName, f.Level)
		}
		numLevels = max(numLevels, int(f.Level)+1)
	}
	if numLevels < 2 {
		return nil, fmt.Errorf("levels: number of levels must be at least 2, got %d", numLevels)
	}
	l := &Levels{cmp: cmp, upper: make([]SortedRun, numLevels-1)}
	if err := l.Apply(nil, files); err != nil {
		return nil, err
	}
	return l, nil
}

// NumLevels is the number of levels, level 0 included.
func (l *Levels) NumLevels() int { return len(l.upper) + 1 }

// MaxLevel is the deepest level, where a full compaction writes.
func (l *Levels) MaxLevel() int { return len(l.upper) }

// Level0 returns the level-0 files, newest first. The slice is shared.
func (l *Levels) Level0() []DataFileMeta { return l.level0 }

// RunOfLevel returns the sorted run of a level >= 1.
func (l *Levels) RunOfLevel(level int) SortedRun {
	if level < 1 || level > l.MaxLevel() {
		panic(fmt.Sprintf("levels: no sorted run for level %d of 0..%d", level, l.MaxLevel()))
	}
	return l.upper[level-1]
}

// NumSortedRuns counts level-0 files plus non-empty levels >= 1.
func (l *Levels) NumSortedRuns() int {
	n := len(l.level0)
	for _, r := range l.upper {
		if len(r.Files) > 0 {
			n++
		}
	}
	return n
}

// NonEmptyHighestLevel is the deepest level holding a file, or -1 when the
// tree is empty.
func (l *Levels) NonEmptyHighestLevel() int {
	for i := len(l.upper) - 1; i >= 0; i-- {
		if len(l.upper[i].Files) > 0 {
			return i + 1
		}
	}
	if len(l.level0) > 0 {
		return 0
	}
	return -1
}

// TotalSize sums the file sizes of every level.
func (l *Levels) TotalSize() int64 {
	var n int64
	for _, f := range l.level0 {
		n += f.FileSize
	}
	for _, r := range l.upper {
		n += r.TotalSize()
	}
	return n
}

// SortedRuns lists the runs in the order compaction picks them: each
// level-0 file (newest first), then each non-empty level ascending.
func (l *Levels) SortedRuns() []LevelSortedRun {
	runs := make([]LevelSortedRun, 0, l.NumSortedRuns())
	for _, f := range l.level0 {
		runs = append(runs, LevelSortedRun{Level: 0, Run: SortedRun{Files: []DataFileMeta{f}}})
	}
	for i, r := range l.upper {
		if len(r.Files) > 0 {
			runs = append(runs, LevelSortedRun{Level: i + 1, Run: r})
		}
	}
	return runs
}

// AllFiles lists every file in SortedRuns order.
func (l *Levels) AllFiles() []DataFileMeta {
	var files []DataFileMeta
	for _, r := range l.SortedRuns() {
		files = append(files, r.Run.Files...)
	}
	return files
}

// Apply removes deleted and adds added, each file identified by (level,
// name), as one change: on error the tree is unchanged. Deleting a file the
// tree lacks, adding one it already has, a level beyond MaxLevel, or a level
// >= 1 whose files would overlap are errors, because each means the caller's
// view of the table has diverged from the committed one. An upgrade is a
// delete at the old level plus an add of the same name at the new one.
func (l *Levels) Apply(deleted, added []DataFileMeta) error {
	byLevel := make(map[int32][2][]DataFileMeta)
	for _, f := range deleted {
		if err := l.checkLevel(f); err != nil {
			return err
		}
		c := byLevel[f.Level]
		c[0] = append(c[0], f)
		byLevel[f.Level] = c
	}
	for _, f := range added {
		if err := l.checkLevel(f); err != nil {
			return err
		}
		c := byLevel[f.Level]
		c[1] = append(c[1], f)
		byLevel[f.Level] = c
	}
	level0 := l.level0
	upper := slices.Clone(l.upper)
	for level, c := range byLevel {
		var cur []DataFileMeta
		if level == 0 {
			cur = level0
		} else {
			cur = upper[level-1].Files
		}
		next, err := replaceFiles(level, cur, c[0], c[1])
		if err != nil {
			return err
		}
		if level == 0 {
			slices.SortFunc(next, level0Compare)
			level0 = next
			continue
		}
		run, err := NewSortedRun(l.cmp, next)
		if err != nil {
			return fmt.Errorf("levels: level %d: %w", level, err)
		}
		upper[level-1] = run
	}
	l.level0, l.upper = level0, upper
	return nil
}

func (l *Levels) checkLevel(f DataFileMeta) error {
	if f.Level < 0 || int(f.Level) > l.MaxLevel() {
		return fmt.Errorf("levels: file %s at level %d, outside 0..%d", f.FileName, f.Level, l.MaxLevel())
	}
	return nil
}

// replaceFiles returns cur without deleted and with added, as a new slice.
func replaceFiles(level int32, cur, deleted, added []DataFileMeta) ([]DataFileMeta, error) {
	gone := make(map[string]bool, len(deleted))
	for _, f := range deleted {
		if gone[f.FileName] {
			return nil, fmt.Errorf("levels: file %s deleted twice from level %d", f.FileName, level)
		}
		gone[f.FileName] = true
	}
	next := make([]DataFileMeta, 0, len(cur)+len(added))
	present := make(map[string]bool, len(cur)+len(added))
	for _, f := range cur {
		if gone[f.FileName] {
			delete(gone, f.FileName)
			continue
		}
		next = append(next, f)
		present[f.FileName] = true
	}
	for name := range gone {
		return nil, fmt.Errorf("levels: cannot delete file %s: not at level %d", name, level)
	}
	for _, f := range added {
		if present[f.FileName] {
			return nil, fmt.Errorf("levels: file %s added twice to level %d", f.FileName, level)
		}
		present[f.FileName] = true
		next = append(next, f)
	}
	return next, nil
}

// level0Compare orders level-0 files newest first: larger maxSequenceNumber,
// then smaller minSequenceNumber, then earlier creation time (unknown first),
// then file name; the same order Paimon's Levels keeps, so compaction picks
// the same runs.
func level0Compare(a, b DataFileMeta) int {
	if a.MaxSequenceNumber != b.MaxSequenceNumber {
		if a.MaxSequenceNumber > b.MaxSequenceNumber {
			return -1
		}
		return 1
	}
	if a.MinSequenceNumber != b.MinSequenceNumber {
		if a.MinSequenceNumber < b.MinSequenceNumber {
			return -1
		}
		return 1
	}
	if c := compareCreationTime(a.CreationTimeMs, b.CreationTimeMs); c != 0 {
		return c
	}
	switch {
	case a.FileName < b.FileName:
		return -1
	case a.FileName > b.FileName:
		return 1
	}
	return 0
}

func compareCreationTime(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case *a < *b:
		return -1
	case *a > *b:
		return 1
	}
	return 0
}
