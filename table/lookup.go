package table

import (
	"bytes"
	"fmt"
)

// LookupSuperseded finds the rows that keys, being carried to level, make
// stale in the deeper levels, the way Paimon's lookup compaction does: each
// key is looked up level by level from level+1, and the first live row found
// (one not already deleted in dvs) is superseded. It returns those rows as
// new deletions; dvs is not changed. keys are encoded (see BucketFiles),
// ascending and unique.
func LookupSuperseded(levels *Levels, level int, keys [][]byte, dvs DeletionVectors, files BucketFiles) (DeletionVectors, error) {
	if level < 0 {
		return nil, fmt.Errorf("lookup: level %d", level)
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return nil, fmt.Errorf("lookup: keys are not ascending and unique at %d", i)
		}
	}
	found := make(DeletionVectors)
	remaining := keys
	for lv := level + 1; lv <= levels.MaxLevel() && len(remaining) > 0; lv++ {
		missed := make([][]byte, 0, len(remaining))
		err := routeKeys(levels.RunOfLevel(lv), remaining, files, func(f DataFileMeta, ks [][]byte) error {
			pos, err := files.FindKeys(f, ks)
			if err != nil {
				return fmt.Errorf("lookup in %s: %w", f.FileName, err)
			}
			if len(pos) != len(ks) {
				return fmt.Errorf("lookup in %s: %d positions for %d keys", f.FileName, len(pos), len(ks))
			}
			for i, p := range pos {
				if p < 0 || dvs.IsDeleted(f.FileName, p) {
					missed = append(missed, ks[i])
					continue
				}
				if p >= f.RowCount {
					return fmt.Errorf("lookup in %s: position %d beyond %d rows", f.FileName, p, f.RowCount)
				}
				found.Add(f.FileName, p)
			}
			return nil
		}, func(ks [][]byte) { missed = append(missed, ks...) })
		if err != nil {
			return nil, err
		}
		remaining = missed
	}
	return found, nil
}

// routeKeys splits ascending keys over the files of a run: inFile gets each
// file with the keys inside its [min, max], outside gets the keys no file
// covers. Both are called in key order.
func routeKeys(run SortedRun, keys [][]byte, files BucketFiles, inFile func(DataFileMeta, [][]byte) error, outside func([][]byte)) error {
	i := 0
	for _, f := range run.Files {
		if i == len(keys) {
			break
		}
		lo, err := files.EncodeKey(f.MinKey)
		if err != nil {
			return fmt.Errorf("min key of %s: %w", f.FileName, err)
		}
		hi, err := files.EncodeKey(f.MaxKey)
		if err != nil {
			return fmt.Errorf("max key of %s: %w", f.FileName, err)
		}
		start := i
		for i < len(keys) && bytes.Compare(keys[i], lo) < 0 {
			i++
		}
		if i > start {
			outside(keys[start:i])
		}
		start = i
		for i < len(keys) && bytes.Compare(keys[i], hi) <= 0 {
			i++
		}
		if i > start {
			if err := inFile(f, keys[start:i]); err != nil {
				return err
			}
		}
	}
	if i < len(keys) {
		outside(keys[i:])
	}
	return nil
}
