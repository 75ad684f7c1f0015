package table

import (
	"bytes"
	"errors"
	"fmt"
)

// maxViolations bounds the violations one check reports.
const maxViolations = 10

// CheckBucket verifies the invariants a deletion-vector table's readers rely
// on, for one bucket: the files of each level >= 1 do not overlap and hold
// exactly the keys their metadata claims, in strictly ascending order; every
// deletion vector names a live level >= 1 file and positions inside it; and
// once the vectors are applied, each key appears at most once across the
// level >= 1 files, as a non-retract row no older than every hidden version
// of it there. Level 0 is not read: readers skip it. It returns every violation
// found (up to a bound), joined.
func CheckBucket(levels *Levels, dvs DeletionVectors, files BucketFiles) error {
	c := &invariantCheck{}
	c.checkStructure(levels, files)
	c.checkDVs(levels, dvs)
	if len(c.errs) == 0 {
		c.checkRows(levels, dvs, files)
	}
	return errors.Join(c.errs...)
}

type invariantCheck struct {
	errs []error
}

func (c *invariantCheck) fail(format string, args ...any) bool {
	if len(c.errs) < maxViolations {
		c.errs = append(c.errs, fmt.Errorf(format, args...))
	}
	return len(c.errs) < maxViolations
}

// checkStructure re-checks the order of each level's files with the row-key
// encoding, independently of the comparator Levels was built with.
func (c *invariantCheck) checkStructure(levels *Levels, files BucketFiles) {
	for lv := 1; lv <= levels.MaxLevel(); lv++ {
		var prevMax []byte
		var prevName string
		for _, f := range levels.RunOfLevel(lv).Files {
			lo, err1 := files.EncodeKey(f.MinKey)
			hi, err2 := files.EncodeKey(f.MaxKey)
			if err := errors.Join(err1, err2); err != nil {
				c.fail("level %d: file %s: bad key range: %w", lv, f.FileName, err)
				continue
			}
			if bytes.Compare(lo, hi) > 0 {
				c.fail("level %d: file %s: min key %x above max key %x", lv, f.FileName, lo, hi)
			}
			if prevMax != nil && bytes.Compare(prevMax, lo) >= 0 {
				c.fail("level %d: files %s and %s overlap", lv, prevName, f.FileName)
			}
			prevMax, prevName = hi, f.FileName
		}
	}
}

func (c *invariantCheck) checkDVs(levels *Levels, dvs DeletionVectors) {
	live := make(map[string]DataFileMeta)
	for lv := 1; lv <= levels.MaxLevel(); lv++ {
		for _, f := range levels.RunOfLevel(lv).Files {
			live[f.FileName] = f
		}
	}
	for name, bm := range dvs {
		f, ok := live[name]
		if !ok {
			c.fail("deletion vector of %s, which is not a live level >= 1 file", name)
			continue
		}
		if !bm.IsEmpty() && int64(bm.Maximum()) >= f.RowCount {
			c.fail("deletion vector of %s deletes position %d of %d rows", name, bm.Maximum(), f.RowCount)
		}
	}
}

// fileSeen is what the row pass saw of one file.
type fileSeen struct {
	rows        int64
	first, last []byte
}

func (c *invariantCheck) checkRows(levels *Levels, dvs DeletionVectors, files BucketFiles) {
	var runs []*runIterator
	for lv := 1; lv <= levels.MaxLevel(); lv++ {
		if r := levels.RunOfLevel(lv); len(r.Files) > 0 {
			runs = append(runs, &runIterator{files: files, run: r.Files})
		}
	}
	m, err := newKWayMerge(runs)
	if err != nil {
		c.fail("%w", err)
		return
	}
	defer m.close()
	seen := make(map[string]*fileSeen)
	for {
		group, err := m.nextGroup()
		if err != nil {
			c.fail("%w", err)
			return
		}
		if group == nil {
			break
		}
		if !c.checkKey(group, dvs, seen) {
			return
		}
	}
	for _, r := range runs {
		for _, f := range r.run {
			s := seen[f.FileName]
			if s == nil {
				s = &fileSeen{}
			}
			c.checkFileSeen(f, s, files)
		}
	}
}

// checkKey checks one key's rows across the level >= 1 files.
func (c *invariantCheck) checkKey(group []*runIterator, dvs DeletionVectors, seen map[string]*fileSeen) bool {
	var visible *runIterator
	var visibleFile string
	var newestHidden int64 = -1 << 63
	for _, r := range group {
		f := r.run[r.next-1]
		s := seen[f.FileName]
		if s == nil {
			s = &fileSeen{first: append([]byte(nil), r.cur.Key()...)}
			seen[f.FileName] = s
		}
		s.rows++
		s.last = append(s.last[:0], r.cur.Key()...)
		if dvs.IsDeleted(f.FileName, r.cur.Pos()) {
			newestHidden = max(newestHidden, r.cur.Seq())
			continue
		}
		if visible != nil {
			return c.fail("key %x is visible in %s (level %d) and %s (level %d)", r.cur.Key(), visibleFile, visible.level, f.FileName, r.level)
		}
		visible, visibleFile = r, f.FileName
	}
	if visible == nil {
		return true
	}
	if visible.cur.Kind().IsRetract() {
		return c.fail("key %x: visible row in %s is a retraction (kind %d)", visible.cur.Key(), visibleFile, visible.cur.Kind())
	}
	// A hidden row of the same sequence number is the visible row's own
	// original: a key-range step of a compaction copies rows down a level
	// and hides them where they were until a later step takes the file.
	if newestHidden > visible.cur.Seq() {
		return c.fail("key %x: visible row in %s has sequence %d, a hidden one has %d", visible.cur.Key(), visibleFile, visible.cur.Seq(), newestHidden)
	}
	return true
}

func (c *invariantCheck) checkFileSeen(f DataFileMeta, s *fileSeen, files BucketFiles) {
	if s.rows != f.RowCount {
		c.fail("file %s: %d rows, metadata says %d", f.FileName, s.rows, f.RowCount)
	}
	if s.rows == 0 {
		return
	}
	lo, err1 := files.EncodeKey(f.MinKey)
	hi, err2 := files.EncodeKey(f.MaxKey)
	if errors.Join(err1, err2) != nil {
		return // reported by checkStructure
	}
	if !bytes.Equal(lo, s.first) || !bytes.Equal(hi, s.last) {
		c.fail("file %s: keys run %x..%x, metadata says %x..%x", f.FileName, s.first, s.last, lo, hi)
	}
}
