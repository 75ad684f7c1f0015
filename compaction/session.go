package compaction

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// Session is the maintenance state machine of one table. It holds the
// table's bucket trees across barriers and decides every compaction; the
// barrier round runs inline (it is synchronous by design), shaping and
// expiration are handed out as Jobs whose blocking work runs elsewhere and
// whose results come back through Finish. At most one Job is out at a time,
// and no round runs while one is: the caller serializes them.
type Session struct {
	t      Table
	schema *table.Schema
	opts   table.CompactionOptions
	cmp    table.KeyComparator
	cfg    Config

	// The view: valid once seeded by a full walk; seen is the newest
	// snapshot folded into it, own the session's commits past seen that are
	// already applied in place (foreign commits may precede them).
	valid     bool
	jobFailed bool // a job failed: no more jobs until the next round, not a retry loop
	seen      int64
	own       map[int64]bool
	trees     trees

	nextCommitID      int64
	budget            budget
	pins              map[int64]int64 // checkpoint -> pinned snapshot
	roundsSinceExpire int
	cursor            int // next bucket shaping looks at
	jobOut            bool
	// intervalSteps counts the shaping steps finished since the last
	// barrier; pace is that count for the last interval that ended with
	// steps still pending: how many steps a compaction gets per round.
	intervalSteps, pace int
	stats               Stats
}

// Stats count what a session did, for tests and instrumentation.
type Stats struct {
	FullWalks int // manifest-chain walks seeding the view
	// FoldFallbacks counts views rebuilt by a walk because the snapshots
	// since the last round could not be folded from their deltas.
	FoldFallbacks int
	DeltasFolded  int   // foreign snapshots folded from their delta alone
	Rounds        int   // barrier rounds
	RoundCommits  int   // barrier rounds that committed
	RoundBytes    int64 // bytes of the files barrier rounds rewrote
	// IngestedBytes is the size of the level-0 files barrier rounds took:
	// what the store wrote, the base of write amplification.
	IngestedBytes int64
	Steps         int // shaping steps committed
	// BoundedSteps counts the shaping steps that rewrote a key range of a
	// section too large for one step (see table.KeyBounds).
	BoundedSteps int
	Shifts       int // runs moved down a level to free level 1
	// RoundShifts counts the barrier rounds that moved runs down to free
	// level 1 for their level-0 files (see Session.roundLevels).
	RoundShifts  int
	ShapingBytes int64
	// IntervalShapingBytes is what shaping wrote since the last barrier.
	IntervalShapingBytes int64
	FilesExpired         int // files dropped whole because every row expired
	Expirations          int
	JobErrors            int
	// KeyFilterBytes is the memory of the key filters the trees keep.
	KeyFilterBytes int
}

// NewSession opens the maintenance of t. firstCommitID starts the commit
// identifiers; it must exceed every identifier an earlier session of the
// table used under the same commit user (the table skips a repeated one),
// so callers derive it from the clock.
func NewSession(t Table, cfg Config, firstCommitID int64) (*Session, error) {
	s := t.Schema()
	if !s.DeletionVectors() {
		return nil, fmt.Errorf("compaction: table has no deletion vectors; its readers would have to merge runs")
	}
	opts, err := table.CompactionOptionsOf(s)
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.withDefaults(opts.TargetFileSize)
	if err != nil {
		return nil, err
	}
	if fb := cfg.fileBytes(opts.TargetFileSize); fb < opts.TargetFileSize {
		// A file is small, and merged with its neighbours rather than
		// moved, in proportion to the size rewrites roll at.
		opts.SmallFileSize = int64(float64(opts.SmallFileSize) * float64(fb) / float64(opts.TargetFileSize))
		opts.TargetFileSize = fb
	}
	// A barrier round merges only when level 1 is occupied and no level is
	// free above the shallowest occupied one. With one level per run the
	// store tolerates before it stalls, rounds that land while a
	// compaction is still running upgrade into the free levels above its
	// inputs instead of merging into level 1 again and again.
	opts.NumLevels = max(opts.NumLevels, opts.NumSortedRunStopTrigger+1)
	if cfg.TTL != nil {
		if i := s.FieldIndex(cfg.TTL.Field); i < 0 || s.Fields[i].Type.Root != table.TypeBigInt {
			return nil, fmt.Errorf("compaction: TTL field %q is not a BIGINT column of the table", cfg.TTL.Field)
		}
	}
	if _, err := s.Buckets(); err != nil {
		return nil, err
	}
	var keyTypes []table.DataType
	for _, k := range s.TrimmedPrimaryKeys() {
		keyTypes = append(keyTypes, s.Fields[s.FieldIndex(k)].Type)
	}
	return &Session{
		t: t, schema: s, opts: opts, cmp: table.NewKeyComparator(keyTypes), cfg: cfg,
		own: map[int64]bool{}, trees: trees{}, nextCommitID: firstCommitID,
		budget: newBudget(cfg.ShapingBudget), pins: map[int64]int64{},
	}, nil
}

// Stats returns the counters.
func (s *Session) Stats() Stats {
	st := s.stats
	st.IntervalShapingBytes = s.budget.spent
	for _, t := range s.trees {
		st.KeyFilterBytes += t.filters.Bytes()
	}
	return st
}

// Backpressure is the session's current verdict for the store.
func (s *Session) Backpressure() Backpressure { return s.backpressure() }

// RoundResult is the outcome of a barrier round.
type RoundResult struct {
	// SnapshotID is the snapshot the checkpoint lists: the round's COMPACT
	// commit, or the newest snapshot when there was nothing to compact.
	SnapshotID   int64
	Committed    bool
	Backpressure Backpressure
}

// Barrier runs the minimal round after the data commit snapshotID: it folds
// the snapshots committed since the last round into the view, moves every
// level-0 file to a level >= 1 (see minimalUnit), marks the rows their keys
// supersede in the bucket's deletion vectors, and commits it all as one
// COMPACT snapshot. It also opens a new shaping interval. An error means the
// level-0 data may still be invisible to readers: the checkpoint must fail.
func (s *Session) Barrier(snapshotID, nowMillis int64) (RoundResult, error) {
	s.mustBeIdle("barrier round")
	s.stats.Rounds++
	for _, t := range s.trees {
		if len(t.pending) > 0 {
			s.pace = s.intervalSteps
			break
		}
	}
	s.intervalSteps = 0
	s.budget.reset()
	s.jobFailed = false
	if err := s.sync(); err != nil {
		return RoundResult{}, err
	}
	if snapshotID > s.seen {
		return RoundResult{}, fmt.Errorf("compaction: barrier after snapshot %d, but the newest snapshot is %d", snapshotID, s.seen)
	}
	var work []bucketChange
	for _, k := range s.trees.sortedKeys() {
		tr := s.trees[k]
		if len(tr.levels.Level0()) == 0 {
			continue
		}
		for _, f := range tr.levels.Level0() {
			s.stats.IngestedBytes += f.FileSize
		}
		levels, shift, err := s.roundLevels(tr.levels)
		if err != nil {
			s.discard(work)
			return RoundResult{}, err
		}
		unit, _ := minimalUnit(s.cmp, levels)
		plan := table.PlanCompaction(s.cmp, unit, levels, s.opts)
		plan.Expiry = s.cfg.TTL.rowExpiry(nowMillis)
		res, err := s.compact(tr, plan, levels, tr.dvs, nowMillis)
		if err != nil {
			s.discard(work)
			return RoundResult{}, fmt.Errorf("compaction: barrier round of bucket %d: %w", tr.bucket, err)
		}
		if len(shift.Deleted) > 0 {
			s.stats.RoundShifts++
			res.Deleted = append(shift.Deleted, res.Deleted...)
			res.Added = append(shift.Added, res.Added...)
		}
		work = append(work, bucketChange{key: k, res: res})
	}
	if len(work) == 0 {
		return RoundResult{SnapshotID: s.seen, Backpressure: s.backpressure()}, nil
	}
	cr, err := s.commit(work, nowMillis)
	if err != nil {
		if !errors.Is(err, table.ErrCommitStateUnknown) {
			s.discard(work)
		}
		// The table is not what the view expected: start over from it.
		s.valid = false
		return RoundResult{}, fmt.Errorf("compaction: barrier round commit: %w", err)
	}
	if err := s.applyOwn(cr.SnapshotID, work); err != nil {
		return RoundResult{}, err
	}
	s.stats.RoundCommits++
	for _, w := range work {
		for _, f := range newFiles(w.res) {
			s.stats.RoundBytes += f.FileSize
		}
	}
	s.roundsSinceExpire++
	if s.cfg.CheckInvariants {
		if err := s.check(work); err != nil {
			return RoundResult{}, err
		}
	}
	return RoundResult{SnapshotID: cr.SnapshotID, Committed: true, Backpressure: s.backpressure()}, nil
}

// roundLevels is the tree a barrier round works on: when level 1 is
// occupied and a level below it is free, the runs above that level move one
// level down first (vacateShift), in the round's own commit, so the round
// upgrades its level-0 files instead of merging them into level 1. The
// round then merges only when every level holds a run, whether or not
// shaping got to free level 1 before the barrier.
func (s *Session) roundLevels(l *table.Levels) (*table.Levels, table.CompactResult, error) {
	files := vacateShift(l)
	if files == nil {
		return l, table.CompactResult{}, nil
	}
	shift := shifted(nil, files)
	moved := make(map[string]bool, len(files))
	for _, f := range files {
		moved[f.FileName] = true
	}
	all := slices.DeleteFunc(l.AllFiles(), func(f table.DataFileMeta) bool { return moved[f.FileName] })
	out, err := table.NewLevels(s.cmp, append(all, shift.Added...), l.NumLevels())
	if err != nil {
		return nil, table.CompactResult{}, fmt.Errorf("compaction: shift level 1 down: %w", err)
	}
	return out, table.CompactResult{Deleted: shift.Deleted, Added: shift.Added}, nil
}

// bucketChange is one bucket's part of a commit.
type bucketChange struct {
	key table.BucketKey
	res table.CompactResult
}

// sync brings the view to the newest snapshot: by folding the deltas of the
// snapshots since the last one seen, or, for an unseeded view or one that
// cannot be folded (a delta already expired, or a commit that is not the
// store's level-0 append, as a restore's adoption is), by one full walk.
func (s *Session) sync() error {
	if s.valid {
		if err := s.foldToLatest(); err == nil {
			return nil
		}
		s.valid = false
		s.stats.FoldFallbacks++
	}
	return s.seed()
}

func (s *Session) foldToLatest() error {
	latest, ok, err := s.t.LatestSnapshotID()
	if err != nil {
		return fmt.Errorf("compaction: newest snapshot: %w", err)
	}
	if !ok {
		latest = 0
	}
	for id := s.seen + 1; id <= latest; id++ {
		if s.own[id] {
			delete(s.own, id)
			s.seen = id
			continue
		}
		entries, _, err := s.t.ReadDelta(id)
		if err != nil {
			return fmt.Errorf("compaction: delta of snapshot %d: %w", id, err)
		}
		if err := s.foldForeign(id, entries); err != nil {
			return err
		}
		s.seen = id
		s.stats.DeltasFolded++
	}
	if len(s.own) > 0 {
		return fmt.Errorf("compaction: own commits %v are past the newest snapshot %d", s.own, latest)
	}
	return nil
}

// foldForeign applies a commit the session did not make (notifyNewFiles).
// The store's commits only add level-0 files; any other change (a restore
// adopting files, or a second compactor) is taken in by a full walk.
func (s *Session) foldForeign(id int64, entries []table.ManifestEntry) error {
	for _, e := range entries {
		if e.Kind != table.FileAdd || e.File.Level != 0 {
			return fmt.Errorf("compaction: snapshot %d changes %s at level %d (kind %d), not a level-0 append",
				id, e.File.FileName, e.File.Level, e.Kind)
		}
	}
	for _, es := range table.GroupByBucket(entries) {
		tr, err := s.tree(es[0].Partition, es[0].Bucket)
		if err != nil {
			return err
		}
		if err := tr.levels.ApplyEntries(es); err != nil {
			return fmt.Errorf("compaction: fold snapshot %d: %w", id, err)
		}
	}
	return nil
}

// seed rebuilds the view from one full walk of the newest snapshot.
func (s *Session) seed() error {
	s.trees.close()
	s.trees, s.own, s.valid, s.seen = trees{}, map[int64]bool{}, false, 0
	return s.install(s.load())
}

// loaded is a full walk of the table, made without touching the view.
type loaded struct {
	snapshot  int64 // 0: the table has no snapshot
	trees     trees
	ownNewest int64 // the identifier of the session user's newest commit, or 0
	err       error
}

// load walks the newest snapshot. It only reads the session's fixed
// configuration, so it may run off the actor.
func (s *Session) load() loaded {
	latest, ok, err := s.t.LatestSnapshotID()
	if err != nil {
		return loaded{err: fmt.Errorf("compaction: newest snapshot: %w", err)}
	}
	if !ok {
		return loaded{trees: trees{}}
	}
	ts, err := s.walk(latest)
	if err != nil {
		return loaded{err: err}
	}
	own, err := s.newestOwnIdentifier(latest)
	if err != nil {
		return loaded{err: err}
	}
	return loaded{snapshot: latest, trees: ts, ownNewest: own}
}

// newestOwnIdentifier finds the identifier of the session user's newest
// commit, walking back from snapshot latest: commit identifiers must grow
// per user, and a restarted session's clock-derived start may not be past
// its predecessor's last commit. The walk is short: every checkpoint ends
// with the session's own commit.
func (s *Session) newestOwnIdentifier(latest int64) (int64, error) {
	for id := latest; id >= 1; id-- {
		snap, err := s.t.Snapshot(id)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil // expired: nothing older is left
		}
		if err != nil {
			return 0, fmt.Errorf("compaction: snapshot %d: %w", id, err)
		}
		if snap.CommitUser == s.cfg.CommitUser {
			return snap.CommitIdentifier, nil
		}
	}
	return 0, nil
}

// install makes a walk the view.
func (s *Session) install(l loaded) error {
	s.stats.FullWalks++
	if l.err != nil {
		return l.err
	}
	s.trees.close()
	s.trees, s.seen, s.own, s.valid = l.trees, l.snapshot, map[int64]bool{}, true
	s.nextCommitID = max(s.nextCommitID, l.ownNewest+1)
	return nil
}

// compact runs one plan against a bucket.
func (s *Session) compact(tr *tree, plan table.CompactPlan, levels *table.Levels, dvs table.DeletionVectors, nowMillis int64) (table.CompactResult, error) {
	files, err := s.bucketFiles(tr, nowMillis)
	if err != nil {
		return table.CompactResult{}, err
	}
	return table.Compact(plan, levels, dvs, files)
}

func (s *Session) bucketFiles(tr *tree, nowMillis int64) (*table.DataBucketFiles, error) {
	created := nowMillis
	return table.NewDataBucketFiles(s.t.FileIO(), tr.dir, s.schema, table.BucketFilesOptions{
		TargetFileSize: s.opts.TargetFileSize,
		NewFileName:    s.t.NewDataFileName,
		CreationTimeMs: &created,
		LookupCache:    tr.lookups,
		KeyFilters:     tr.filters,
	})
}

// changeOf turns bucket changes into the table's compaction commit.
func (s *Session) changeOf(work []bucketChange) table.CompactChange {
	var ch table.CompactChange
	for _, w := range work {
		tr := s.trees[w.key]
		c := w.res.Change(tr.partition, tr.bucket)
		ch.Deleted = append(ch.Deleted, c.Deleted...)
		ch.Added = append(ch.Added, c.Added...)
		ch.DVFiles = append(ch.DVFiles, c.DVFiles...)
	}
	return ch
}

func (s *Session) commitInfo(nowMillis int64) table.CommitInfo {
	id := s.nextCommitID
	s.nextCommitID++
	return table.CommitInfo{User: s.cfg.CommitUser, Identifier: id, TimeMillis: nowMillis}
}

func (s *Session) commit(work []bucketChange, nowMillis int64) (table.CommitResult, error) {
	return commitChange(s.t, s.changeOf(work), s.commitInfo(nowMillis))
}

func commitChange(t Table, ch table.CompactChange, info table.CommitInfo) (table.CommitResult, error) {
	cr, err := t.CommitCompact(ch, info)
	if errors.Is(err, table.ErrCommitStateUnknown) {
		// The same commit again tells whether the first one landed: it is
		// then skipped and names its snapshot.
		return t.CommitCompact(ch, info)
	}
	if err != nil {
		return cr, err
	}
	if cr.Skipped {
		return cr, fmt.Errorf("compaction: commit %s/%d was already committed: identifiers must grow", info.User, info.Identifier)
	}
	return cr, nil
}

// applyOwn applies the session's own commit to the view in place, which is
// what a fresh walk of the table would find.
func (s *Session) applyOwn(id int64, work []bucketChange) error {
	if id <= s.seen || s.own[id] {
		s.valid = false
		return fmt.Errorf("compaction: own commit %d is not new (seen %d)", id, s.seen)
	}
	for _, w := range work {
		tr := s.trees[w.key]
		if err := tr.levels.Apply(w.res.Deleted, w.res.Added); err != nil {
			s.valid = false
			return fmt.Errorf("compaction: apply own commit %d to bucket %d: %w", id, tr.bucket, err)
		}
		tr.dvs = w.res.DVs
		tr.retainLookups()
	}
	if id == s.seen+1 {
		s.seen = id
	} else {
		s.own[id] = true
	}
	return nil
}

// discard removes the new files of changes that will not be committed.
func (s *Session) discard(work []bucketChange) {
	for _, w := range work {
		removeNew(s.t.FileIO(), s.trees[w.key].dir, w.res)
	}
}

// removeNew removes the files a compaction wrote. Best effort: a file no
// snapshot names is never read.
func removeNew(fio table.FileIO, dir string, res table.CompactResult) {
	for _, f := range newFiles(res) {
		_ = fio.Remove(path.Join(dir, f.FileName))
	}
}

// newFiles are the files a compaction wrote, as opposed to upgraded ones.
func newFiles(res table.CompactResult) []table.DataFileMeta {
	old := make(map[string]bool, len(res.Deleted))
	for _, f := range res.Deleted {
		old[f.FileName] = true
	}
	var out []table.DataFileMeta
	for _, f := range res.Added {
		if !old[f.FileName] {
			out = append(out, f)
		}
	}
	return out
}

// Close releases the files the session keeps open. The session is not
// used afterwards.
func (s *Session) Close() { s.trees.close() }

// Busy reports whether a job is out.
func (s *Session) Busy() bool { return s.jobOut }

func (s *Session) mustBeIdle(what string) {
	if s.jobOut {
		panic(fmt.Sprintf("compaction: %s while a job is out", what))
	}
}
