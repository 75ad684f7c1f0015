package compaction

import (
	"slices"

	"github.com/lakestate/lakestate/table"
)

// shapingStep is one sub-plan of a cut compaction and the bytes the budget
// must allow before it starts: what it is expected to read, give or take
// encoding an upper bound of what it writes (for the first step of a section
// cut by key range, the whole section's).
type shapingStep struct {
	plan  table.CompactPlan
	bytes int64
	// cont: the step continues a section cut by key range, whose first
	// step the budget allowed for the whole section. It runs whatever the
	// budget says, so a cut section does not linger over many intervals:
	// every barrier round in between would merge into level 1.
	cont bool
}

// splitPlan cuts a compaction plan into sub-plans that can each be executed
// and committed on its own, in order, each reading about maxBytes at most.
// Cuts fall between key-disjoint sections: a section's output covers only
// its own key range, and every file of the output level inside that range
// belongs to the section, so committing the sections one at a time leaves a
// valid tree after each. A section larger than maxBytes is cut by key range
// (see cutSection). No cut follows a group made only of files already at the
// output level (small files the plan merges with their neighbours):
// rewritten alone they would stay as small.
func splitPlan(cmp table.KeyComparator, p table.CompactPlan, maxBytes int64) []shapingStep {
	var out []shapingStep
	cur := shapingStep{plan: table.CompactPlan{OutputLevel: p.OutputLevel, DropDelete: p.DropDelete, Expiry: p.Expiry}}
	onlyStragglers := true
	flush := func() {
		if len(cur.plan.Steps) > 0 {
			out = append(out, cur)
		}
		cur = shapingStep{plan: table.CompactPlan{OutputLevel: p.OutputLevel, DropDelete: p.DropDelete, Expiry: p.Expiry}}
		onlyStragglers = true
	}
	add := func(b int64) {
		if cur.bytes > 0 && maxBytes > 0 && cur.bytes+b > maxBytes && !onlyStragglers {
			flush()
		}
	}
	for _, s := range p.Steps {
		if s.Kind != table.StepRewrite {
			cur.plan.Steps = append(cur.plan.Steps, s)
			continue
		}
		for _, section := range s.Sections {
			if pieces := cutSection(cmp, section, p.OutputLevel, maxBytes, s.Lookup); pieces != nil {
				if !onlyStragglers {
					flush()
				}
				for i, pc := range pieces {
					cur.plan.Steps = append(cur.plan.Steps, pc.plan.Steps...)
					if i == 0 {
						cur.bytes += sectionBytes(section)
					} else {
						cur.bytes, cur.cont = pc.bytes, true
					}
					out = append(out, cur)
					cur = shapingStep{plan: table.CompactPlan{OutputLevel: p.OutputLevel, DropDelete: p.DropDelete, Expiry: p.Expiry}}
				}
				onlyStragglers = true
				continue
			}
			b := sectionBytes(section)
			add(b)
			onlyStragglers = onlyStragglers && atLevel(section, p.OutputLevel)
			// Consecutive sections of one rewrite share a writer, so their
			// output rolls across them as in the uncut plan.
			if n := len(cur.plan.Steps); n > 0 && cur.plan.Steps[n-1].Kind == table.StepRewrite &&
				cur.plan.Steps[n-1].Bounds == nil && cur.plan.Steps[n-1].Lookup == s.Lookup {
				cur.plan.Steps[n-1].Sections = append(cur.plan.Steps[n-1].Sections, section)
			} else {
				cur.plan.Steps = append(cur.plan.Steps, table.CompactStep{Kind: table.StepRewrite, Sections: [][]table.SortedRun{section}, Lookup: s.Lookup})
			}
			cur.bytes += b
		}
	}
	flush()
	return out
}

// cutSection cuts a section larger than maxBytes into bounded rewrites
// (table.KeyBounds) of about maxBytes each, or returns nil when it cannot.
// The cuts fall after files of the output level, which a bounded rewrite
// must take whole; with no input at the output level, after files of the
// run with the most files. A file of the other runs that spans a cut is
// taken a key range at a time. Each piece's bytes are estimated: the guiding
// files it holds, plus the other runs' bytes in the same proportion, as if
// keys were spread alike over all runs. Sections with level-0 rows are not
// cut: their keys' lookups below the output level would have to be cut too.
func cutSection(cmp table.KeyComparator, section []table.SortedRun, outputLevel int, maxBytes int64, lookup bool) []shapingStep {
	total := sectionBytes(section)
	if lookup || maxBytes <= 0 || total <= maxBytes || outputLevel < 1 {
		return nil
	}
	var guides []table.DataFileMeta
	for _, r := range section {
		for _, f := range r.Files {
			if int(f.Level) == outputLevel {
				guides = append(guides, f)
			}
		}
	}
	if len(guides) == 0 {
		for _, r := range section {
			if len(r.Files) > len(guides) {
				guides = r.Files
			}
		}
	}
	guides = slices.Clone(guides)
	slices.SortFunc(guides, func(a, b table.DataFileMeta) int { return cmp(a.MinKey, b.MinKey) })
	var guideBytes int64
	for _, g := range guides {
		guideBytes += g.FileSize
	}
	if len(guides) < 2 || guideBytes <= 0 {
		return nil
	}
	scale := float64(total) / float64(guideBytes)
	estimate := func(g table.DataFileMeta) int64 { return int64(float64(g.FileSize) * scale) }
	var out []shapingStep
	var after []byte
	var acc int64
	for i, g := range guides {
		acc += estimate(g)
		if i+1 < len(guides) && acc+estimate(guides[i+1]) <= maxBytes {
			continue
		}
		var upTo []byte
		if i+1 < len(guides) {
			upTo = g.MaxKey
		}
		out = append(out, boundedPiece(cmp, section, after, upTo, acc))
		after, acc = upTo, 0
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// boundedPiece is the rewrite of a section's keys in (after, upTo]: the
// files that hold such keys, in their runs.
func boundedPiece(cmp table.KeyComparator, section []table.SortedRun, after, upTo []byte, bytes int64) shapingStep {
	var runs []table.SortedRun
	for _, r := range section {
		var files []table.DataFileMeta
		for _, f := range r.Files {
			if (after == nil || cmp(f.MaxKey, after) > 0) && (upTo == nil || cmp(f.MinKey, upTo) <= 0) {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			runs = append(runs, table.SortedRun{Files: files})
		}
	}
	return shapingStep{bytes: bytes, plan: table.CompactPlan{Steps: []table.CompactStep{{
		Kind: table.StepRewrite, Sections: [][]table.SortedRun{runs}, Bounds: &table.KeyBounds{After: after, UpTo: upTo},
	}}}}
}

// atLevel reports whether every file of a section is at level.
func atLevel(section []table.SortedRun, level int) bool {
	for _, r := range section {
		for _, f := range r.Files {
			if int(f.Level) != level {
				return false
			}
		}
	}
	return true
}

// refreshPlan brings a plan made on an earlier state of a tree up to date,
// or reports that it can no longer run. Barrier rounds may have taken some
// of the inputs of its bounded steps in the meantime (level 1 merges with
// level 0): those drop out of the plan, since their live rows now sit in the
// round's output above, and every key still keeps one live row; the steps
// take that output in (joinBounded). A bounded step also follows an input
// that a round moved down a level (Session.roundLevels). The plan is stale
// when an input of another step is gone or moved, an input moved to the
// output level, or a file of the output level that it does not read
// overlaps the key range a step writes.
func refreshPlan(cmp table.KeyComparator, p table.CompactPlan, l *table.Levels) (table.CompactPlan, bool) {
	if p.OutputLevel < 1 || p.OutputLevel > l.MaxLevel() {
		return p, false
	}
	at := map[string]int32{}
	for _, f := range l.AllFiles() {
		at[f.FileName] = f.Level
	}
	stale := false
	out := p
	out.Steps = nil
	for _, s := range p.Steps {
		live := func(f *table.DataFileMeta) bool {
			lv, ok := at[f.FileName]
			// Only a bounded step takes the round's output in; without it,
			// that output would stay in level 1 after the compaction, where
			// every later round merges into it. Picking again takes it.
			stale = stale || (!ok && s.Bounds == nil)
			if ok && lv != f.Level {
				// A bounded step takes its inputs a key range at a time
				// wherever they are, so it follows one that a round moved
				// down to free level 1; one that reached the output level
				// would have to lie within the bounds.
				if s.Bounds == nil || int(lv) == p.OutputLevel {
					stale = true
				}
				f.Level = lv
			}
			return ok
		}
		if s.Kind == table.StepUpgrade {
			if live(&s.File) {
				out.Steps = append(out.Steps, s)
			}
			continue
		}
		var sections [][]table.SortedRun
		for _, section := range s.Sections {
			var runs []table.SortedRun
			for _, r := range section {
				files := slices.Clone(r.Files)
				for i := range files {
					if !live(&files[i]) {
						files[i].FileName = ""
					}
				}
				files = slices.DeleteFunc(files, func(f table.DataFileMeta) bool { return f.FileName == "" })
				if len(files) > 0 {
					runs = append(runs, table.SortedRun{Files: files})
				}
			}
			if len(runs) > 0 {
				sections = append(sections, runs)
			}
		}
		if len(sections) > 0 {
			s.Sections = sections
			out.Steps = append(out.Steps, s)
		}
	}
	if stale || len(out.Steps) == 0 {
		return p, false
	}
	joinBounded(cmp, out, l)
	inputs := map[string]bool{}
	var ranges []keyRange
	for _, s := range out.Steps {
		files := stepFiles(s)
		for _, f := range files {
			inputs[f.FileName] = true
		}
		if s.Bounds != nil {
			ranges = append(ranges, keyRange{lo: s.Bounds.After, hi: s.Bounds.UpTo})
			continue
		}
		r := keyRange{lo: files[0].MinKey, loIncl: true, hi: files[0].MaxKey}
		for _, f := range files[1:] {
			if cmp(f.MinKey, r.lo) < 0 {
				r.lo = f.MinKey
			}
			if cmp(f.MaxKey, r.hi) > 0 {
				r.hi = f.MaxKey
			}
		}
		ranges = append(ranges, r)
	}
	for _, g := range l.RunOfLevel(p.OutputLevel).Files {
		if inputs[g.FileName] {
			continue
		}
		for _, r := range ranges {
			if r.overlaps(cmp, g) {
				return p, false
			}
		}
	}
	return out, true
}

// joinBounded adds to each bounded step of p the files above its output
// level that hold keys in its bounds and that p does not read: what barrier
// rounds put there since the compaction began (usually level 1, where a
// round merges when every level is taken). The step takes their rows in its
// bounds along, so they do not pile up in level 1, which every round would
// have to merge again, for as long as the compaction runs.
func joinBounded(cmp table.KeyComparator, p table.CompactPlan, l *table.Levels) {
	inputs := map[string]bool{}
	for _, s := range p.Steps {
		for _, f := range stepFiles(s) {
			inputs[f.FileName] = true
		}
	}
	for i, s := range p.Steps {
		if s.Bounds == nil {
			continue
		}
		r := keyRange{lo: s.Bounds.After, hi: s.Bounds.UpTo}
		section := slices.Clone(s.Sections[0])
		for lv := 1; lv < p.OutputLevel; lv++ {
			var files []table.DataFileMeta
			for _, f := range l.RunOfLevel(lv).Files {
				if !inputs[f.FileName] && r.overlaps(cmp, f) {
					files = append(files, f)
				}
			}
			if len(files) > 0 {
				section = append(section, table.SortedRun{Files: files})
			}
		}
		p.Steps[i].Sections = [][]table.SortedRun{section}
	}
}

// keyRange is the key range a step writes: keys above lo (or from lo, with
// loIncl) up to hi inclusive; nil ends are unbounded.
type keyRange struct {
	lo     []byte
	loIncl bool
	hi     []byte
}

func (r keyRange) overlaps(cmp table.KeyComparator, f table.DataFileMeta) bool {
	if r.lo != nil {
		if c := cmp(f.MaxKey, r.lo); c < 0 || (c == 0 && !r.loIncl) {
			return false
		}
	}
	return r.hi == nil || cmp(f.MinKey, r.hi) <= 0
}

// stepFiles lists the input files of a step.
func stepFiles(s table.CompactStep) []table.DataFileMeta {
	if s.Kind == table.StepUpgrade {
		return []table.DataFileMeta{s.File}
	}
	var out []table.DataFileMeta
	for _, section := range s.Sections {
		for _, r := range section {
			out = append(out, r.Files...)
		}
	}
	return out
}

func sectionBytes(section []table.SortedRun) int64 {
	var n int64
	for _, r := range section {
		n += r.TotalSize()
	}
	return n
}

// budget paces shaping: each checkpoint interval brings limit bytes of
// credit (never more than limit banked), and a step that writes est bytes
// starts only when the credit covers it. A step larger than the whole limit
// starts when the credit is full and leaves a debt that the next intervals
// repay before shaping resumes: no interval writes more than the limit except
// one oversized step alone, and over any run of intervals shaping writes at
// most the limit per interval plus one step.
type budget struct {
	limit  int64 // 0: unlimited
	credit int64
	spent  int64 // in the current interval
}

func newBudget(limit int64) budget { return budget{limit: limit, credit: limit} }

func (b *budget) allows(est int64) bool {
	return b.limit == 0 || est <= b.credit || b.credit >= b.limit
}

func (b *budget) charge(n int64) {
	b.credit -= n
	b.spent += n
}

// reset opens a new interval.
func (b *budget) reset() {
	b.credit = min(b.credit+b.limit, b.limit)
	b.spent = 0
}

// exhausted reports whether no more shaping fits this interval.
func (b *budget) exhausted() bool { return b.limit > 0 && b.credit <= 0 }
