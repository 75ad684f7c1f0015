package table

// CompactUnit is the files one compaction reads and the level it writes.
type CompactUnit struct {
	OutputLevel int
	Files       []DataFileMeta
}

// UniversalCompaction picks compactions in the style of RocksDB's universal
// compaction, the way Paimon's UniversalCompaction does (without the optional
// early-full and off-peak rules). Runs are given newest first, as
// Levels.SortedRuns lists them.
type UniversalCompaction struct {
	MaxSizeAmplificationPercent int
	SizeRatio                   int
	NumSortedRunTrigger         int
}

// Pick returns the compaction the runs call for, if any: first for size
// amplification (everything to the max level), then for size ratio, then for
// run count above the trigger.
func (u UniversalCompaction) Pick(numLevels int, runs []LevelSortedRun) (CompactUnit, bool) {
	maxLevel := numLevels - 1
	if unit, ok := u.pickForSizeAmp(maxLevel, runs); ok {
		return worthCompacting(unit)
	}
	if len(runs) >= u.NumSortedRunTrigger {
		if unit, ok := u.pickForSizeRatio(maxLevel, runs, 1, false); ok {
			return worthCompacting(unit)
		}
	}
	if len(runs) > u.NumSortedRunTrigger {
		if unit, ok := u.pickForSizeRatio(maxLevel, runs, len(runs)-u.NumSortedRunTrigger+1, false); ok {
			return worthCompacting(unit)
		}
	}
	return CompactUnit{}, false
}

// PickNewest merges the newest count runs, and each next run the size ratio
// admits (runs at levels 0 and 1 regardless): Paimon's pick for a run count
// past the trigger, for a caller that must take runs before the trigger
// would. count is at least 2.
func (u UniversalCompaction) PickNewest(numLevels int, runs []LevelSortedRun, count int) (CompactUnit, bool) {
	if count < 2 || count > len(runs) {
		return CompactUnit{}, false
	}
	unit, _ := u.pickForSizeRatio(numLevels-1, runs, count, false)
	return worthCompacting(unit)
}

// PickLevel0 takes every level-0 run, plus the following runs the size ratio
// admits, whatever the triggers say: the lookup round that makes level-0 data
// visible in a deletion-vector table.
func (u UniversalCompaction) PickLevel0(numLevels int, runs []LevelSortedRun) (CompactUnit, bool) {
	n := 0
	for n < len(runs) && runs[n].Level == 0 {
		n++
	}
	if n == 0 {
		return CompactUnit{}, false
	}
	unit, _ := u.pickForSizeRatio(numLevels-1, runs, n, true)
	return worthCompacting(unit)
}

// PickForceUpLevel0 is Paimon's lookup strategy (ForceUpLevel0Compaction,
// radical): the universal pick if there is one, else PickLevel0.
func (u UniversalCompaction) PickForceUpLevel0(numLevels int, runs []LevelSortedRun) (CompactUnit, bool) {
	if unit, ok := u.Pick(numLevels, runs); ok {
		return unit, true
	}
	return u.PickLevel0(numLevels, runs)
}

// pickForSizeAmp compacts everything when the runs above the oldest hold
// more than MaxSizeAmplificationPercent of the oldest run's size.
func (u UniversalCompaction) pickForSizeAmp(maxLevel int, runs []LevelSortedRun) (CompactUnit, bool) {
	if len(runs) < u.NumSortedRunTrigger || len(runs) == 0 {
		return CompactUnit{}, false
	}
	var candidate int64
	for _, r := range runs[:len(runs)-1] {
		candidate += r.Run.TotalSize()
	}
	earliest := runs[len(runs)-1].Run.TotalSize()
	if candidate*100 > int64(u.MaxSizeAmplificationPercent)*earliest {
		return unitOf(maxLevel, runs), true
	}
	return CompactUnit{}, false
}

// pickForSizeRatio starts from the newest count runs and absorbs the next run
// while the candidates, grown by SizeRatio percent, are at least its size.
// Once triggered, runs at levels 0 and 1 are absorbed regardless of size.
func (u UniversalCompaction) pickForSizeRatio(maxLevel int, runs []LevelSortedRun, count int, force bool) (CompactUnit, bool) {
	var candidate int64
	for _, r := range runs[:count] {
		candidate += r.Run.TotalSize()
	}
	triggered := force || count > 1
	for i := count; i < len(runs); i++ {
		next := runs[i]
		if float64(candidate)*(100.0+float64(u.SizeRatio))/100.0 < float64(next.Run.TotalSize()) {
			if !triggered || next.Level > 1 {
				break
			}
		}
		candidate += next.Run.TotalSize()
		count++
		triggered = true
	}
	if !triggered {
		return CompactUnit{}, false
	}
	return createUnit(runs, maxLevel, count), true
}

// createUnit writes to the level just above the next untouched run, never
// to level 0 (it then absorbs runs up to the first level >= 1 and writes
// there), and to the max level when every run is taken.
func createUnit(runs []LevelSortedRun, maxLevel, count int) CompactUnit {
	var out int
	if count == len(runs) {
		out = maxLevel
	} else {
		out = max(0, runs[count].Level-1)
	}
	if out == 0 {
		for i := count; i < len(runs); i++ {
			count++
			if runs[i].Level != 0 {
				out = runs[i].Level
				break
			}
		}
	}
	if count == len(runs) {
		out = maxLevel
	}
	return unitOf(out, runs[:count])
}

func unitOf(outputLevel int, runs []LevelSortedRun) CompactUnit {
	u := CompactUnit{OutputLevel: outputLevel}
	for _, r := range runs {
		u.Files = append(u.Files, r.Run.Files...)
	}
	return u
}

// worthCompacting drops a unit that would change nothing: no files, or a
// single file already at the output level.
func worthCompacting(u CompactUnit) (CompactUnit, bool) {
	if len(u.Files) == 0 || (len(u.Files) == 1 && int(u.Files[0].Level) == u.OutputLevel) {
		return CompactUnit{}, false
	}
	return u, true
}

// ShouldWaitForCompaction reports whether writers must stall until a
// compaction finishes: more sorted runs than the stop trigger.
func (l *Levels) ShouldWaitForCompaction(stopTrigger int) bool {
	return l.NumSortedRuns() > stopTrigger
}
