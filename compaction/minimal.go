package compaction

import (
	"github.com/lakestate/lakestate/table"
)

// minimalUnit is the barrier round's compaction of one bucket: every
// level-0 file, written to the level just above the shallowest non-empty
// level >= 1 (the max level when there is none), so the files move up
// without touching anything else. When level 1 is occupied there is no such
// level; the level-0 files then merge into level 1 together with the level-1
// files whose key ranges they overlap, and no others.
//
// Unlike a size-ratio pick, it never absorbs deeper runs: the round's cost
// stays proportional to the barrier's delta, and the shape of the deeper
// levels is left to shaping.
func minimalUnit(cmp table.KeyComparator, l *table.Levels) (table.CompactUnit, bool) {
	l0 := l.Level0()
	if len(l0) == 0 {
		return table.CompactUnit{}, false
	}
	unit := table.CompactUnit{Files: append([]table.DataFileMeta(nil), l0...)}
	shallowest := 0
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		if len(l.RunOfLevel(lv).Files) > 0 {
			shallowest = lv
			break
		}
	}
	switch shallowest {
	case 0:
		unit.OutputLevel = l.MaxLevel()
	case 1:
		unit.OutputLevel = 1
		for _, f := range l.RunOfLevel(1).Files {
			if overlapsAny(cmp, f, l0) {
				unit.Files = append(unit.Files, f)
			}
		}
	default:
		unit.OutputLevel = shallowest - 1
	}
	return unit, true
}

func overlapsAny(cmp table.KeyComparator, f table.DataFileMeta, files []table.DataFileMeta) bool {
	for _, g := range files {
		if cmp(f.MinKey, g.MaxKey) <= 0 && cmp(g.MinKey, f.MaxKey) <= 0 {
			return true
		}
	}
	return false
}
