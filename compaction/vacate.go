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
// two newest runs, and each next run no larger than the merge so far
// (universal compaction's size-ratio pick for one run too many), into the
// level above the first run it leaves, or the max level. The next step can
// then shift the runs above down.
//
// Merging the smallest adjacent pair instead is cheaper now and dearer
// soon: that pair is mostly the newest run and the one below it, so the run
// below grows by one checkpoint's delta per merge and is rewritten each
// time, a cost quadratic in the number of checkpoints. Merging the newest
// runs by size ratio keeps the runs growing geometrically with age and
// frees every level it merges at once.
func vacateMerge(u table.UniversalCompaction, l *table.Levels) (table.CompactUnit, bool) {
	if len(l.Level0()) > 0 || len(l.RunOfLevel(1).Files) == 0 {
		return table.CompactUnit{}, false
	}
	for lv := 2; lv <= l.MaxLevel(); lv++ {
		if len(l.RunOfLevel(lv).Files) == 0 {
			return table.CompactUnit{}, false
		}
	}
	return u.PickNewest(l.NumLevels(), l.SortedRuns(), 2)
}
