package compaction

import (
	"github.com/lakestate/lakestate/table"
)

// splitPlan cuts a compaction plan into sub-plans that can each be executed
// and committed on its own, in order, each reading at most maxBytes unless a
// single section is larger. The cuts fall between key-disjoint sections: a
// section's output covers only its own key range, and every file of the
// output level inside that range belongs to the section, so committing the
// sections one at a time leaves a valid tree after each. No cut follows a
// group made only of files already at the output level (small files the plan
// merges with their neighbours): rewritten alone they would stay as small.
func splitPlan(p table.CompactPlan, maxBytes int64) []table.CompactPlan {
	var out []table.CompactPlan
	cur := table.CompactPlan{OutputLevel: p.OutputLevel, DropDelete: p.DropDelete, Expiry: p.Expiry}
	var curBytes int64
	onlyStragglers := true
	flush := func() {
		if len(cur.Steps) > 0 {
			out = append(out, cur)
		}
		cur = table.CompactPlan{OutputLevel: p.OutputLevel, DropDelete: p.DropDelete, Expiry: p.Expiry}
		curBytes, onlyStragglers = 0, true
	}
	for _, s := range p.Steps {
		if s.Kind != table.StepRewrite {
			cur.Steps = append(cur.Steps, s)
			continue
		}
		for _, section := range s.Sections {
			b := sectionBytes(section)
			if curBytes > 0 && maxBytes > 0 && curBytes+b > maxBytes && !onlyStragglers {
				flush()
			}
			onlyStragglers = onlyStragglers && atLevel(section, p.OutputLevel)
			// Consecutive sections of one rewrite share a writer, so their
			// output rolls across them as in the uncut plan.
			if n := len(cur.Steps); n > 0 && cur.Steps[n-1].Kind == table.StepRewrite && cur.Steps[n-1].Lookup == s.Lookup {
				cur.Steps[n-1].Sections = append(cur.Steps[n-1].Sections, section)
			} else {
				cur.Steps = append(cur.Steps, table.CompactStep{Kind: table.StepRewrite, Sections: [][]table.SortedRun{section}, Lookup: s.Lookup})
			}
			curBytes += b
		}
	}
	flush()
	return out
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

// planValid reports whether a plan made on an earlier state of a tree can
// still run: every input is still live at its level, and no other file of
// the output level overlaps the key range a step writes.
func planValid(cmp table.KeyComparator, p table.CompactPlan, l *table.Levels) bool {
	at := map[string]int32{}
	for _, f := range l.AllFiles() {
		at[f.FileName] = f.Level
	}
	inputs := map[string]bool{}
	var ranges [][2][]byte
	for _, s := range p.Steps {
		files := stepFiles(s)
		for _, f := range files {
			if lv, ok := at[f.FileName]; !ok || lv != f.Level {
				return false
			}
			inputs[f.FileName] = true
		}
		lo, hi := files[0].MinKey, files[0].MaxKey
		for _, f := range files[1:] {
			if cmp(f.MinKey, lo) < 0 {
				lo = f.MinKey
			}
			if cmp(f.MaxKey, hi) > 0 {
				hi = f.MaxKey
			}
		}
		ranges = append(ranges, [2][]byte{lo, hi})
	}
	if p.OutputLevel < 1 || p.OutputLevel > l.MaxLevel() {
		return false
	}
	for _, g := range l.RunOfLevel(p.OutputLevel).Files {
		if inputs[g.FileName] {
			continue
		}
		for _, r := range ranges {
			if cmp(g.MinKey, r[1]) <= 0 && cmp(r[0], g.MaxKey) <= 0 {
				return false
			}
		}
	}
	return true
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

// rewriteBytes is the input a plan rewrites: an upper bound, give or take
// encoding, of the new bytes it writes. Upgrades write nothing.
func rewriteBytes(p table.CompactPlan) int64 {
	var n int64
	for _, s := range p.Steps {
		if s.Kind == table.StepRewrite {
			for _, section := range s.Sections {
				n += sectionBytes(section)
			}
		}
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
