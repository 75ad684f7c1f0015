package table

import (
	"bytes"
	"fmt"
	"slices"
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
	// Keys go on to the next level unless found: nearly all of them, as
	// most are new to the table. remaining aliases keys until a level
	// finds one; from then on it is a copy, cut down in place.
	remaining := keyBatch{keys: keys, hashes: make([]uint64, len(keys))}
	for i, k := range keys {
		remaining.hashes[i] = keyHash(k)
	}
	owned := false
	// No level after the last that has files needs the keys it misses.
	deepest := level
	for lv := level + 1; lv <= levels.MaxLevel(); lv++ {
		if len(levels.RunOfLevel(lv).Files) > 0 {
			deepest = lv
		}
	}
	var may []int32
	var look [][]byte
	var hit []int // indices in remaining of the keys a level found, ascending
	for lv := level + 1; lv <= deepest && len(remaining.keys) > 0; lv++ {
		run := levels.RunOfLevel(lv)
		if len(run.Files) == 0 {
			continue
		}
		hit = hit[:0]
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
			if len(may) == 0 {
				return nil
			}
			look = look[:0]
			for _, i := range may {
				look = append(look, ks[i])
			}
			pos, err := files.FindKeys(f, look)
			if err != nil {
				return fmt.Errorf("lookup in %s: %w", f.FileName, err)
			}
			if len(pos) != len(look) {
				return fmt.Errorf("lookup in %s: %d positions for %d keys", f.FileName, len(pos), len(look))
			}
			for j, i := range may {
				p := pos[j]
				if p < 0 || dvs.IsDeleted(f.FileName, p) {
					continue
				}
				if p >= f.RowCount {
					return fmt.Errorf("lookup in %s: position %d beyond %d rows", f.FileName, p, f.RowCount)
				}
				found.Add(f.FileName, p)
				hit = append(hit, lo+int(i))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(hit) == 0 || lv == deepest {
			continue
		}
		if !owned {
			remaining = keyBatch{keys: slices.Clone(remaining.keys), hashes: remaining.hashes}
			owned = true
		}
		remaining.drop(hit)
	}
	return found, nil
}

// keyBatch is keys with their hashes (keyHash), hashed once for every level.
type keyBatch struct {
	keys   [][]byte
	hashes []uint64
}

// drop removes the keys at the ascending indices at, in place.
func (b *keyBatch) drop(at []int) {
	w := at[0]
	for n, i := range at {
		end := len(b.keys)
		if n+1 < len(at) {
			end = at[n+1]
		}
		copy(b.keys[w:], b.keys[i+1:end])
		copy(b.hashes[w:], b.hashes[i+1:end])
		w += end - i - 1
	}
	clear(b.keys[w:])
	b.keys, b.hashes = b.keys[:w], b.hashes[:w]
}

// routeKeys hands inFile each file of a run with the range [lo, hi) of the
// ascending keys inside its [min, max], in key order. The range's ends are
// found by galloping from the previous file's: the cost follows the files,
// not the keys.
func routeKeys(run SortedRun, keys [][]byte, files BucketFiles, inFile func(f DataFileMeta, lo, hi int) error) error {
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
		i = gallopKeys(keys, i, func(k []byte) bool { return bytes.Compare(k, lo) >= 0 })
		start := i
		i = gallopKeys(keys, i, func(k []byte) bool { return bytes.Compare(k, hi) > 0 })
		if i > start {
			if err := inFile(f, start, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// gallopKeys returns the first index i >= from of keys with ge(keys[i]) (or
// len(keys)), ge being false and then true along keys: steps doubling from
// from, then a bisection of the last step, about 2*log2(distance) calls.
func gallopKeys(keys [][]byte, from int, ge func(k []byte) bool) int {
	lo, step := from, 1
	for lo+step <= len(keys) && !ge(keys[lo+step-1]) {
		lo += step
		step *= 2
	}
	hi := min(len(keys), lo+step-1)
	// keys[lo-1] (if lo > from) is below; the answer lies in [lo, hi].
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ge(keys[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}
