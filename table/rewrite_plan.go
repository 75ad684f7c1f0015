package table

// StepKind says what a compaction step does with its input.
type StepKind uint8

const (
	// StepUpgrade moves one file to the output level without rewriting it:
	// a DELETE entry at its old level and an ADD of the same name at the new.
	StepUpgrade StepKind = iota + 1
	// StepRewrite merges sections into new files at the output level.
	StepRewrite
)

// CompactStep is one action of a compaction.
type CompactStep struct {
	Kind StepKind
	// File is the file a StepUpgrade moves.
	File DataFileMeta
	// Sections are the key-disjoint sections a StepRewrite merges, each from
	// its sorted runs.
	Sections [][]SortedRun
	// Lookup is set when the step carries level-0 rows into a level >= 1 of a
	// deletion-vector table: every key of its level-0 rows that no level >= 1
	// input holds is looked up in the levels below the output level, and the
	// row found there is marked deleted, so the level >= 1 files stay
	// standalone-correct.
	Lookup bool
	// Bounds, when set, limit a StepRewrite of one section to a key range
	// (see KeyBounds), so a compaction too large for one step can be cut
	// inside a section. Never with Lookup.
	Bounds *KeyBounds
}

// KeyBounds select the keys k with After < k <= UpTo (serialized key
// BinaryRows; nil After: from the first key, nil UpTo: to the last). A
// bounded rewrite writes the newest row of each such key at the output level
// and marks the rows it took in their inputs' deletion vectors, so each key
// keeps exactly one live row and every level stays standalone-correct; an
// input left without a live row is deleted. So an input that reaches past
// UpTo stays where it is for the steps of the later key ranges, and an input
// may join a compaction between its steps (a barrier round's output): its
// rows before the bounds stay live. An input at the output level must lie
// wholly within the bounds, or the output would overlap it.
type KeyBounds struct {
	After, UpTo []byte
}

// CompactPlan is a compaction unit turned into steps, the way Paimon's
// merge-tree compact task and lookup rewriter decide between rewriting and
// upgrading in place.
type CompactPlan struct {
	OutputLevel int
	// DropDelete: retract rows are not written, because no older version of
	// their key can remain below the output (output is the deepest non-empty
	// level, or deletion vectors hide the older versions).
	DropDelete bool
	Steps      []CompactStep
	// Expiry, when set by the caller, drops expired keys where retractions
	// are dropped.
	Expiry *RowExpiry
}

// PlanCompaction decides how to execute unit against the tree it was picked
// from. Overlapping files are merged. A key-disjoint file is upgraded in
// place when it is at least SmallFileSize, else merged with its small
// neighbours; but a file with deletes (or an unknown delete count) headed for
// the max level is rewritten, and so is a level-0 file with deletes in a
// deletion-vector table, because its deletes must be dropped.
func PlanCompaction(cmp KeyComparator, unit CompactUnit, levels *Levels, o CompactionOptions) CompactPlan {
	p := &planner{
		plan: CompactPlan{
			OutputLevel: unit.OutputLevel,
			DropDelete:  unit.OutputLevel != 0 && (unit.OutputLevel >= levels.NonEmptyHighestLevel() || o.DeletionVectors),
		},
		maxLevel: levels.MaxLevel(),
		dv:       o.DeletionVectors,
	}
	var candidate [][]SortedRun
	for _, section := range partitionSections(cmp, unit.Files) {
		if len(section) > 1 {
			candidate = append(candidate, section)
			continue
		}
		for _, f := range section[0].Files {
			if f.FileSize < o.SmallFileSize {
				candidate = append(candidate, []SortedRun{{Files: []DataFileMeta{f}}})
				continue
			}
			p.rewrite(candidate)
			candidate = nil
			p.upgrade(f)
		}
	}
	p.rewrite(candidate)
	return p.plan
}

type planner struct {
	plan     CompactPlan
	maxLevel int
	dv       bool
}

// rewrite merges the gathered sections, except that a lone run of small
// files is upgraded file by file: nothing overlaps it.
func (p *planner) rewrite(candidate [][]SortedRun) {
	switch {
	case len(candidate) == 0:
	case len(candidate) == 1 && len(candidate[0]) == 1:
		for _, f := range candidate[0][0].Files {
			p.upgrade(f)
		}
	default:
		p.addRewrite(candidate)
	}
}

func (p *planner) upgrade(f DataFileMeta) {
	out := p.plan.OutputLevel
	single := [][]SortedRun{{{Files: []DataFileMeta{f}}}}
	switch {
	case out == p.maxLevel && mayHoldDeletes(f):
		p.addRewrite(single)
	case int(f.Level) == out:
	case p.dv && f.Level == 0 && mayHoldDeletes(f):
		p.addRewrite(single)
	default:
		p.plan.Steps = append(p.plan.Steps, CompactStep{Kind: StepUpgrade, File: f, Lookup: p.dv && f.Level == 0 && out != 0})
	}
}

func (p *planner) addRewrite(sections [][]SortedRun) {
	lookup := false
	if p.dv && p.plan.OutputLevel != 0 {
		for _, s := range sections {
			for _, r := range s {
				for _, f := range r.Files {
					lookup = lookup || f.Level == 0
				}
			}
		}
	}
	p.plan.Steps = append(p.plan.Steps, CompactStep{Kind: StepRewrite, Sections: sections, Lookup: lookup})
}

// mayHoldDeletes: an unknown delete-row count counts as deletes, as in Paimon.
func mayHoldDeletes(f DataFileMeta) bool {
	return f.DeleteRowCount == nil || *f.DeleteRowCount > 0
}
