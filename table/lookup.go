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
//
// A file is searched only for the keys within its key range that its key
// filter (BucketFiles.KeyFilter) lets pass: keys new to the table, as those
// of append-only state are, mostly reach no file at all.
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
	remaining := keyBatch{keys: keys, hashes: make([]uint64, len(keys))}
	for i, k := range keys {
		remaining.hashes[i] = keyHash(k)
	}
	// Keys found nowhere in a level go on to the next level that has
	// files; none follows the last.
	deepest := level
	for lv := level + 1; lv <= levels.MaxLevel(); lv++ {
		if len(levels.RunOfLevel(lv).Files) > 0 {
			deepest = lv
		}
	}
	var may []int32
	var look [][]byte
	for lv := level + 1; lv <= deepest && len(remaining.keys) > 0; lv++ {
		run := levels.RunOfLevel(lv)
		if len(run.Files) == 0 {
			continue
		}
		var missed keyBatch
		last := lv == deepest
		if !last {
			missed.reserve(len(remaining.keys))
		}
		err := routeKeys(run, remaining.keys, files, func(f DataFileMeta, lo, hi int) error {
			ks, hs := remaining.keys[lo:hi], remaining.hashes[lo:hi]
			flt, err := files.KeyFilter(f)
			if err != nil {
				return fmt.Errorf("lookup in %s: key filter: %w", f.FileName, err)
			}
			may = may[:0]
			if flt != nil {
				may = flt.mayHold(ks, hs, may)
			} else {
				for i := range ks {
					may = append(may, int32(i))
				}
			}
			var pos []int64
			if len(may) > 0 {
				look = look[:0]
				for _, i := range may {
					look = append(look, ks[i])
				}
				if pos, err = files.FindKeys(f, look); err != nil {
					return fmt.Errorf("lookup in %s: %w", f.FileName, err)
				}
				if len(pos) != len(look) {
					return fmt.Errorf("lookup in %s: %d positions for %d keys", f.FileName, len(pos), len(look))
				}
			}
			// Keys the filter ruled out and keys looked for in vain both
			// go on to the next level, in key order: the runs between
			// keys found, copied whole.
			from := 0
			for j, i := range may {
				p := pos[j]
				if p < 0 || dvs.IsDeleted(f.FileName, p) {
					continue
				}
				if p >= f.RowCount {
					return fmt.Errorf("lookup in %s: position %d beyond %d rows", f.FileName, p, f.RowCount)
				}
				found.Add(f.FileName, p)
				if !last {
					missed.addAll(remaining, lo+from, lo+int(i))
				}
				from = int(i) + 1
			}
			if !last {
				missed.addAll(remaining, lo+from, hi)
			}
			return nil
		}, func(lo, hi int) {
			if !last {
				missed.addAll(remaining, lo, hi)
			}
		})
		if err != nil {
			return nil, err
		}
		remaining = missed
	}
	return found, nil
}

// keyBatch is keys with their hashes (keyHash), hashed once for every level.
type keyBatch struct {
	keys   [][]byte
	hashes []uint64
}

func (b *keyBatch) reserve(n int) {
	b.keys, b.hashes = make([][]byte, 0, n), make([]uint64, 0, n)
}

func (b *keyBatch) addAll(from keyBatch, lo, hi int) {
	b.keys, b.hashes = append(b.keys, from.keys[lo:hi]...), append(b.hashes, from.hashes[lo:hi]...)
}

// routeKeys splits ascending keys over the files of a run: inFile gets each
// file with the range [lo, hi) of keys inside its [min, max], outside gets
// each range of keys no file covers. Both are called in key order.
func routeKeys(run SortedRun, keys [][]byte, files BucketFiles, inFile func(f DataFileMeta, lo, hi int) error, outside func(lo, hi int)) error {
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
			outside(start, i)
		}
		start = i
		for i < len(keys) && bytes.Compare(keys[i], hi) <= 0 {
			i++
		}
		if i > start {
			if err := inFile(f, start, i); err != nil {
				return err
			}
		}
	}
	if i < len(keys) {
		outside(i, len(keys))
	}
	return nil
}
