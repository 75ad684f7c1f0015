package compaction

import (
	"github.com/lakestate/lakestate/table"
)

// Level 1 is where a barrier round must merge when it is occupied: the
// level-0 files of the round are newer than everything, so they can only go
// above the shallowest occupied level. Kept free, every round is a pure
// upgrade plus lookups. Universal picks alone do not keep it free: with level
// 0 emptied at every barrier a bucket never has more runs than levels, so
// the run-count trigger stays quiet and level 1 grows, round after round,
// until the size ratio finally takes it. Shaping therefore vacates level 1
// when universal compaction has nothing to do.

// vacateShift finds the cheapest way to free level 1: when some level
// below it is empty, the runs above that level each move one level down,
// deepest first. It returns the files to move (all of levels 1..e-1 for the
// shallowest empty level e), or nil.
func vacateShift(l *table.Levels) []table.DataFileMeta {
	if len(l.RunOfLevel(1).Files) == 0 {
		return nil
	}
	for e := 2; e <= l.MaxLevel(); e++ {
		if len(l.RunOfLevel(e).Files) > 0 {
			continue
		}
		var files []table.DataFileMeta
		for lv := e - 1; lv >= 1; lv-- {
			files = append(files, l.RunOfLevel(lv).Files...)
		}
		return files
	}
	return nil
}

// shifted is the compaction result of moving files one level down: each
// leaves its level and joins the next, unchanged, deletion vectors and all.
func shifted(dvs table.DeletionVectors, files []table.DataFileMeta) table.CompactResult {
	res := table.CompactResult{Deleted: files, DVs: dvs.Clone()}
	for _, f := range files {
		f.Level++
		res.Added = append(res.Added, f)
	}
	return res
}

// vacateMerge is the compaction that frees a level when none is empty: the
// two adjacent levels (from level 1 down) of the smallest combined size merge
// into the deeper one. The next step can then shift the runs above down.
func vacateMerge(l *table.Levels) (table.CompactUnit, bool) {
	if len(l.Level0()) > 0 || len(l.RunOfLevel(1).Files) == 0 {
		return table.CompactUnit{}, false
	}
	best, bestSize := 0, int64(-1)
	for lv := 1; lv < l.MaxLevel(); lv++ {
		a, b := l.RunOfLevel(lv), l.RunOfLevel(lv+1)
		if len(a.Files) == 0 || len(b.Files) == 0 {
			return table.CompactUnit{}, false
		}
		if size := a.TotalSize() + b.TotalSize(); bestSize < 0 || size < bestSize {
			best, bestSize = lv, size
		}
	}
	if best == 0 {
		return table.CompactUnit{}, false
	}
	unit := table.CompactUnit{OutputLevel: best + 1}
	unit.Files = append(unit.Files, l.RunOfLevel(best).Files...)
	unit.Files = append(unit.Files, l.RunOfLevel(best+1).Files...)
	return unit, true
}
