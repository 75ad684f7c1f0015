package table

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// CompactResult is what one compaction changed in a bucket: the entries of a
// COMPACT commit and the bucket's deletion vectors after it.
type CompactResult struct {
	// Deleted are the files leaving their level: rewritten inputs, and the
	// old level of upgraded files.
	Deleted []DataFileMeta
	// Added are the rewritten outputs and the upgraded files at their new
	// level (same name).
	Added []DataFileMeta
	// DVs is the bucket's complete deletion-vector set after the change:
	// the input set without the vectors of rewritten files, plus the rows
	// the lookups superseded. DVChanged says whether it differs.
	DVs       DeletionVectors
	DVChanged bool
}

// Compact executes a plan against the bucket it was made for. Rewrites read
// their inputs with deletion vectors applied, merge them by key keeping the
// newest row, drop retract rows when the plan says so, and write new files at
// the output level. Upgrades keep their file. Steps marked Lookup then have
// their level-0 keys looked up below the output level. dvs is not changed;
// on error every file written is removed.
func Compact(plan CompactPlan, levels *Levels, dvs DeletionVectors, files BucketFiles) (CompactResult, error) {
	c := &compaction{plan: plan, levels: levels, dvs: dvs, files: files}
	res, err := c.run()
	if err != nil {
		for _, w := range c.writers {
			w.Abort()
		}
		return CompactResult{}, err
	}
	return res, nil
}

type compaction struct {
	plan    CompactPlan
	expiry  *rowExpiry
	levels  *Levels
	dvs     DeletionVectors
	files   BucketFiles
	writers []RowWriter
	lookup  keyList // keys to look up below the output level, ascending
	res     CompactResult
}

func (c *compaction) run() (CompactResult, error) {
	out := c.plan.OutputLevel
	if out < 0 || out > c.levels.MaxLevel() {
		return CompactResult{}, fmt.Errorf("compact: output level %d outside 0..%d", out, c.levels.MaxLevel())
	}
	expiry, err := resolveExpiry(c.plan.Expiry, c.files)
	if err != nil {
		return CompactResult{}, err
	}
	c.expiry = expiry
	c.res.DVs = c.dvs.Clone()
	for _, s := range c.plan.Steps {
		var err error
		switch s.Kind {
		case StepUpgrade:
			err = c.upgrade(s)
		case StepRewrite:
			err = c.rewrite(s)
		default:
			err = fmt.Errorf("compact: unknown step kind %d", s.Kind)
		}
		if err != nil {
			return CompactResult{}, err
		}
	}
	if len(c.lookup.keys) > 0 {
		found, err := LookupSuperseded(c.levels, out, c.lookup.keys, c.res.DVs, c.files)
		if err != nil {
			return CompactResult{}, err
		}
		if c.res.DVs.Merge(found) {
			c.res.DVChanged = true
		}
	}
	return c.res, nil
}

func (c *compaction) upgrade(s CompactStep) error {
	f := s.File
	if int(f.Level) == c.plan.OutputLevel {
		return fmt.Errorf("compact: upgrade of %s to its own level %d", f.FileName, f.Level)
	}
	if s.Lookup {
		if err := c.collectKeys(f); err != nil {
			return err
		}
	}
	up := f
	up.Level = int32(c.plan.OutputLevel)
	c.res.Deleted = append(c.res.Deleted, f)
	c.res.Added = append(c.res.Added, up)
	return nil
}

// collectKeys reads the keys of a file carried up without rewriting.
func (c *compaction) collectKeys(f DataFileMeta) error {
	c.lookup.reserve(int(f.RowCount))
	if err := c.files.ReadKeys(f, c.dvs[f.FileName], c.lookup.add); err != nil {
		return fmt.Errorf("compact: read keys of %s: %w", f.FileName, err)
	}
	return nil
}

func (c *compaction) rewrite(s CompactStep) error {
	if s.Bounds != nil {
		return c.rewriteBounded(s)
	}
	w, err := c.files.NewWriter(c.plan.OutputLevel)
	if err != nil {
		return fmt.Errorf("compact: new writer at level %d: %w", c.plan.OutputLevel, err)
	}
	c.writers = append(c.writers, w)
	for i, section := range s.Sections {
		if i > 0 && c.foreignFileBetween(s.Sections[i-1], section) {
			if err := w.Roll(); err != nil {
				return fmt.Errorf("compact: roll level-%d output: %w", c.plan.OutputLevel, err)
			}
		}
		if _, err := c.mergeSection(section, s.Lookup, nil, w); err != nil {
			return err
		}
		for _, r := range section {
			for _, f := range r.Files {
				c.res.Deleted = append(c.res.Deleted, f)
				if c.res.DVs.Remove(f.FileName) {
					c.res.DVChanged = true
				}
			}
		}
	}
	return c.finish(w)
}

func (c *compaction) finish(w RowWriter) error {
	added, err := w.Finish()
	if err != nil {
		return fmt.Errorf("compact: finish level-%d output: %w", c.plan.OutputLevel, err)
	}
	for _, f := range added {
		if int(f.Level) != c.plan.OutputLevel {
			return fmt.Errorf("compact: writer produced %s at level %d, want %d", f.FileName, f.Level, c.plan.OutputLevel)
		}
	}
	c.res.Added = append(c.res.Added, added...)
	return nil
}

// rewriteBounded runs a step limited to a key range (see KeyBounds): the
// inputs lose the rows inside it to their deletion vectors, and those left
// without a live row are replaced.
func (c *compaction) rewriteBounded(s CompactStep) error {
	b := s.Bounds
	out := c.plan.OutputLevel
	switch {
	case len(s.Sections) != 1:
		return fmt.Errorf("compact: a bounded rewrite of %d sections, want one", len(s.Sections))
	case s.Lookup:
		return fmt.Errorf("compact: a bounded rewrite with level-0 lookups")
	case out == 0:
		return fmt.Errorf("compact: a bounded rewrite to level 0")
	}
	cmp := c.levels.cmp
	for _, r := range s.Sections[0] {
		for _, f := range r.Files {
			if int(f.Level) == out && ((b.UpTo != nil && cmp(f.MaxKey, b.UpTo) > 0) || (b.After != nil && cmp(f.MinKey, b.After) <= 0)) {
				return fmt.Errorf("compact: %s at output level %d reaches outside the step's bounds", f.FileName, out)
			}
		}
	}
	var bounds encodedBounds
	var err error
	if b.After != nil {
		if bounds.after, err = c.files.EncodeKey(b.After); err != nil {
			return fmt.Errorf("compact: encode lower bound: %w", err)
		}
	}
	if b.UpTo != nil {
		if bounds.upTo, err = c.files.EncodeKey(b.UpTo); err != nil {
			return fmt.Errorf("compact: encode upper bound: %w", err)
		}
	}
	w, err := c.files.NewWriter(out)
	if err != nil {
		return fmt.Errorf("compact: new writer at level %d: %w", out, err)
	}
	c.writers = append(c.writers, w)
	taken, err := c.mergeSection(s.Sections[0], false, &bounds, w)
	if err != nil {
		return err
	}
	// The rows the step took join each input's deletion vector; an input
	// left with no live row is replaced. One that reaches past UpTo, or
	// that holds rows at or before After which no earlier step took (it
	// joined the compaction late), stays.
	for _, t := range taken {
		dv := c.res.DVs[t.file]
		if dv == nil {
			dv = roaring.New()
			c.res.DVs[t.file] = dv
		}
		n := dv.GetCardinality()
		dv.AddRange(uint64(t.first), uint64(t.last)+1)
		c.res.DVChanged = c.res.DVChanged || dv.GetCardinality() != n
	}
	for _, r := range s.Sections[0] {
		for _, f := range r.Files {
			dv := c.res.DVs[f.FileName]
			if dv == nil || int64(dv.GetCardinality()) < f.RowCount {
				if int(f.Level) == out {
					return fmt.Errorf("compact: %s at output level %d keeps rows the step did not take", f.FileName, out)
				}
				continue
			}
			c.res.Deleted = append(c.res.Deleted, f)
			c.res.DVs.Remove(f.FileName)
			c.res.DVChanged = true
		}
	}
	return c.finish(w)
}

// encodedBounds are KeyBounds in the encoding of RowIterator.Key.
type encodedBounds struct {
	after, upTo []byte
}

// mergeSection merges one section's runs into w. With lookup, a key that
// only level-0 rows hold is queued for the lookup below the output level,
// whatever its newest row is: a retract or expired row still supersedes the
// older version there.
func (c *compaction) mergeSection(section []SortedRun, lookup bool, bounds *encodedBounds, w RowWriter) ([]takenRows, error) {
	runs := make([]*runIterator, len(section))
	for i, r := range section {
		runs[i] = &runIterator{files: c.files, run: r.Files, dvs: c.dvs}
		if bounds != nil {
			runs[i].bounded, runs[i].after, runs[i].upTo = true, bounds.after, bounds.upTo
		}
	}
	m, err := newKWayMerge(runs)
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	defer m.close()
	for {
		group, err := m.nextGroup()
		if err != nil {
			return nil, fmt.Errorf("compact: %w", err)
		}
		if group == nil {
			var taken []takenRows
			for _, r := range runs {
				taken = append(taken, r.taken...)
			}
			return taken, nil
		}
		if lookup && !anyAboveLevel0(group) {
			c.lookup.add(group[0].cur.Key())
		}
		best := newestOf(group)
		if !c.plan.DropDelete || !(best.cur.Kind().IsRetract() || c.expiry.expired(best.cur)) {
			if err := w.Write(best.cur); err != nil {
				return nil, fmt.Errorf("compact: write: %w", err)
			}
		}
		if len(group) == 1 {
			if err := c.stretch(best, m.bound(), lookup, w); err != nil {
				return nil, fmt.Errorf("compact: %w", err)
			}
		}
	}
}

// stretch goes on with the run of a group of one alone while its keys stay
// below bound, the smallest key of the other runs (nil: none left), up to
// the end of its decoded chunk: each such key is a group of one, so the
// merge needs no heap operation for it. Inputs long stretches of which no
// other input interleaves (a delta of new keys, a level's files) then cost
// a key comparison or two per row. r is left at the last row it yielded,
// as nextGroup would leave it.
func (c *compaction) stretch(r *runIterator, bound []byte, lookup bool, w RowWriter) error {
	it, ok := r.cur.(*dataFileRows)
	if !ok {
		return nil
	}
	drop := c.plan.DropDelete
	last := it.i // the last row yielded
	defer func() { it.i = last }()
	for j := it.i + 1; j < it.chunk.n; j++ {
		pos := it.chunk.first + int64(j)
		if it.deleted != nil && it.deleted.Contains(uint32(pos)) {
			continue
		}
		key := it.keyAt(j)
		if (bound != nil && bytes.Compare(key, bound) >= 0) || (r.upTo != nil && bytes.Compare(key, r.upTo) > 0) {
			return nil
		}
		if bytes.Compare(r.key, key) >= 0 {
			return fmt.Errorf("run of %s: keys do not ascend at position %d of %s", r.run[0].FileName, pos, r.run[r.next-1].FileName)
		}
		it.i, last, r.key = j, j, key
		if r.bounded {
			r.take(pos)
		}
		if lookup && r.level == 0 {
			c.lookup.add(key)
		}
		if drop && (it.chunk.kinds[j].IsRetract() || c.expiry.expired(it)) {
			continue
		}
		if err := w.Write(it); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// foreignFileBetween reports whether a file of the output level that the
// compaction does not read lies between two of its sections. One output file
// must not span both then, or it would overlap that file: the unit holds
// only part of the output level.
func (c *compaction) foreignFileBetween(prev, next []SortedRun) bool {
	if c.plan.OutputLevel == 0 {
		return false
	}
	cmp := c.levels.cmp
	var hi, lo []byte
	for _, r := range prev {
		for _, f := range r.Files {
			if hi == nil || cmp(f.MaxKey, hi) > 0 {
				hi = f.MaxKey
			}
		}
	}
	for _, r := range next {
		for _, f := range r.Files {
			if lo == nil || cmp(f.MinKey, lo) < 0 {
				lo = f.MinKey
			}
		}
	}
	for _, f := range c.levels.RunOfLevel(c.plan.OutputLevel).Files {
		if cmp(f.MinKey, hi) > 0 && cmp(f.MaxKey, lo) < 0 {
			return true
		}
	}
	return false
}

func anyAboveLevel0(group []*runIterator) bool {
	for _, r := range group {
		if r.level > 0 {
			return true
		}
	}
	return false
}

// keyList collects keys in blocks of memory shared by many keys: no
// allocation per key, and no copy of the keys as the list grows.
type keyList struct {
	block []byte
	keys  [][]byte
}

const keyListBlock = 64 << 10

func (l *keyList) add(key []byte) {
	if cap(l.block)-len(l.block) < len(key) {
		l.block = make([]byte, 0, max(keyListBlock, len(key)))
	}
	n := len(l.block)
	l.block = append(l.block, key...)
	l.keys = append(l.keys, l.block[n:len(l.block):len(l.block)])
}

// reserve makes room for n more keys.
func (l *keyList) reserve(n int) { l.keys = slices.Grow(l.keys, n) }
