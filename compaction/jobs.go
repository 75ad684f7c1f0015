package compaction

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// JobKind says what a Job does.
type JobKind uint8

const (
	// JobShape runs one shaping step: a slice of a universal pick, merged
	// and committed.
	JobShape JobKind = iota + 1
	// JobDropExpired commits the removal of files whose rows all expired.
	JobDropExpired
	// JobExpire expires old snapshots and deletes the files nothing retained
	// or pinned references.
	JobExpire
	// JobSeed walks the table to rebuild the session's view, when a shaping
	// commit failed or nothing has seeded it yet.
	JobSeed
	// JobShift moves the runs above the shallowest empty level one level
	// down, without rewriting them, so level 1 is free for the next round.
	JobShift
)

func (k JobKind) String() string {
	switch k {
	case JobShape:
		return "shape"
	case JobDropExpired:
		return "drop-expired"
	case JobExpire:
		return "expire"
	case JobSeed:
		return "seed"
	case JobShift:
		return "shift"
	}
	return fmt.Sprintf("JobKind(%d)", uint8(k))
}

// Job is blocking maintenance work handed out by the session. Run touches
// nothing of the session: it works on copies taken when the job was made.
type Job struct {
	Kind JobKind
	t    Table

	// JobShape, JobDropExpired, JobShift
	bucket    table.BucketKey
	partition []byte
	dir       string
	plan      table.CompactPlan
	levels    *table.Levels
	dvs       table.DeletionVectors
	files     table.BucketFiles
	dropped   []table.DataFileMeta
	shift     []table.DataFileMeta
	info      table.CommitInfo

	// JobExpire
	keep int
	pins table.PinSet

	// JobSeed
	s *Session
}

// JobResult is what a Job's Run returns, for Session.Finish.
type JobResult struct {
	job       *Job
	res       table.CompactResult
	commit    table.CommitResult
	attempted bool // a commit was attempted: on error its outcome is unknown
	expire    table.ExpireResult
	loaded    loaded
	err       error
}

// Run does the job's blocking work.
func (j *Job) Run() *JobResult {
	r := &JobResult{job: j}
	switch j.Kind {
	case JobExpire:
		r.expire, r.err = j.t.Expire(j.keep, j.pins)
		return r
	case JobSeed:
		r.loaded = j.s.load()
		return r
	case JobShape:
		r.res, r.err = table.Compact(j.plan, j.levels, j.dvs, j.files)
	case JobDropExpired:
		r.res = dropFiles(j.dvs, j.dropped)
	case JobShift:
		r.res = shifted(j.dvs, j.shift)
	}
	if r.err != nil {
		return r
	}
	r.attempted = true
	r.commit, r.err = commitChange(j.t, r.res.Change(j.partition, j.bucket.Bucket), j.info)
	if r.err != nil && !errors.Is(r.err, table.ErrCommitStateUnknown) {
		removeNew(j.t.FileIO(), j.dir, r.res)
	}
	return r
}

// dropFiles is the compaction result of removing files whole, with their
// deletion vectors.
func dropFiles(dvs table.DeletionVectors, files []table.DataFileMeta) table.CompactResult {
	res := table.CompactResult{Deleted: files, DVs: dvs.Clone()}
	for _, f := range files {
		if res.DVs.Remove(f.FileName) {
			res.DVChanged = true
		}
	}
	return res
}

// NextJob returns the maintenance to run now, or nil: expiration when due,
// else files whose rows all expired, else the next shaping step while the
// interval's budget allows it. Until Finish takes the job's result back, the
// session hands out no other job and runs no barrier round.
func (s *Session) NextJob(nowMillis int64) *Job {
	s.mustBeIdle("next job")
	j := s.nextJob(nowMillis)
	s.jobOut = j != nil
	return j
}

func (s *Session) nextJob(nowMillis int64) *Job {
	if s.jobFailed {
		return nil
	}
	if s.expireDue() {
		return &Job{Kind: JobExpire, t: s.t, keep: s.cfg.RetainSnapshots, pins: s.pinSet()}
	}
	if !s.valid {
		return &Job{Kind: JobSeed, t: s.t, s: s}
	}
	exhausted := s.budget.exhausted()
	keys := s.trees.sortedKeys()
	for i := range keys {
		tr := s.trees[keys[(s.cursor+i)%len(keys)]]
		if len(tr.levels.Level0()) > 0 {
			// Level 0 belongs to the next barrier round.
			continue
		}
		if exhausted && (len(tr.pending) == 0 || !tr.pending[0].cont) {
			continue
		}
		j, ok := s.bucketJob(tr, nowMillis)
		if !ok {
			continue
		}
		if j == nil {
			// The step does not fit in what is left of the budget.
			return nil
		}
		s.cursor = (s.cursor + i + 1) % len(keys)
		return j
	}
	return nil
}

// bucketJob picks a bucket's next job: ok is false when the bucket needs
// none; j is nil when it needs one the budget cannot pay for now.
func (s *Session) bucketJob(tr *tree, nowMillis int64) (j *Job, ok bool) {
	base := Job{t: s.t, bucket: tr.key, levels: tr.levels, dvs: tr.dvs.Clone(), partition: tr.partition, dir: tr.dir}
	if dropped := s.cfg.TTL.expiredFiles(s.schema, tr.levels, nowMillis); len(dropped) > 0 {
		base.Kind, base.dropped, base.info = JobDropExpired, dropped, s.commitInfo(nowMillis)
		return &base, true
	}
	if len(tr.pending) > 0 {
		plan, ok := refreshPlan(s.cmp, tr.pending[0].plan, tr.levels)
		if ok {
			tr.pending[0].plan = plan
		} else {
			// The tree changed under the rest of the compaction: pick again.
			tr.pending = nil
		}
	}
	if len(tr.pending) == 0 {
		unit, ok := s.opts.Universal().Pick(tr.levels.NumLevels(), tr.levels.SortedRuns())
		if !ok {
			if files := vacateShift(tr.levels); files != nil {
				base.Kind, base.shift, base.info = JobShift, files, s.commitInfo(nowMillis)
				return &base, true
			}
			unit, ok = vacateMerge(s.opts.Universal(), tr.levels)
		}
		if !ok {
			return nil, false
		}
		plan := table.PlanCompaction(s.cmp, unit, tr.levels, s.opts)
		tr.pending = splitPlan(s.cmp, plan, s.stepBytes(tr.levels, plan))
		if len(tr.pending) == 0 {
			return nil, false
		}
	}
	plan := tr.pending[0].plan
	if !tr.pending[0].cont && !s.budget.allows(tr.pending[0].bytes) {
		return nil, true
	}
	tr.pending = tr.pending[1:]
	plan.Expiry = s.cfg.TTL.rowExpiry(nowMillis)
	files, err := s.bucketFiles(tr, nowMillis)
	if err != nil {
		return nil, false
	}
	base.Kind, base.plan, base.files, base.info = JobShape, plan, files, s.commitInfo(nowMillis)
	return &base, true
}

// stepBytes is the step size a compaction of l is cut at. Each barrier
// round that lands while it runs takes a free level (one above the
// shallowest run), and once none is left, rounds merge into level 1 in the
// sync phase, rewriting it whole round after round. So a compaction is cut
// into no more steps than the last intervals finished for each free level
// (at least one), with steps up to maxStepGrowth times StepBytes: a barrier
// may wait for a larger step rather than for a merge that grows with every
// round.
func (s *Session) stepBytes(l *table.Levels, p table.CompactPlan) int64 {
	free := 0
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		if lv != p.OutputLevel && len(l.RunOfLevel(lv).Files) == 0 {
			free++
		}
	}
	var total int64
	for _, st := range p.Steps {
		for _, f := range stepFiles(st) {
			total += f.FileSize
		}
	}
	steps := int64(max(1, free) * max(1, s.pace))
	return max(s.cfg.StepBytes, min(total/steps, maxStepGrowth*s.cfg.StepBytes))
}

// maxStepGrowth bounds how much larger than StepBytes stepBytes cuts.
const maxStepGrowth = 4

// Finish takes a job's result back into the session. A failed shaping job
// is no failure of the table: shaping can lag without harm, so the error is
// only reported; but when its commit may have landed, the view is rebuilt
// before the next round.
func (s *Session) Finish(r *JobResult) error {
	if !s.jobOut {
		panic("compaction: a job finished that the session did not hand out")
	}
	s.jobOut = false
	j := r.job
	if r.err != nil {
		s.stats.JobErrors++
		s.jobFailed = true
		if r.attempted {
			s.valid = false
		}
		return fmt.Errorf("compaction: %s job: %w", j.Kind, r.err)
	}
	switch j.Kind {
	case JobSeed:
		err := s.install(r.loaded)
		s.jobFailed = err != nil
		return err
	case JobExpire:
		s.roundsSinceExpire = 0
		s.stats.Expirations++
		return nil
	case JobDropExpired:
		s.stats.FilesExpired += len(j.dropped)
	case JobShift:
		s.stats.Shifts++
	case JobShape:
		s.stats.Steps++
		s.intervalSteps++
		if slices.ContainsFunc(j.plan.Steps, func(st table.CompactStep) bool { return st.Bounds != nil }) {
			s.stats.BoundedSteps++
		}
		written := int64(0)
		for _, f := range newFiles(r.res) {
			written += f.FileSize
		}
		s.budget.charge(written)
		s.stats.ShapingBytes += written
	}
	work := []bucketChange{{key: j.bucket, res: r.res}}
	if err := s.applyOwn(r.commit.SnapshotID, work); err != nil {
		return err
	}
	if s.cfg.CheckInvariants {
		return s.check(work)
	}
	return nil
}

func (s *Session) expireDue() bool {
	return s.cfg.RetainSnapshots > 0 && s.roundsSinceExpire >= max(1, s.cfg.ExpireEvery)
}

// Pin keeps every file of snapshot alive while checkpoint is in flight:
// expiration will not delete them until Unpin. Pinning a checkpoint again
// moves its pin.
func (s *Session) Pin(checkpoint, snapshot int64) { s.pins[checkpoint] = snapshot }

// Unpin releases a checkpoint's pin (completed, aborted or subsumed), and
// with upTo the pins of every earlier checkpoint too, so a lost
// notification cannot hold expiration back forever.
func (s *Session) Unpin(checkpoint int64, upTo bool) {
	for c := range s.pins {
		if c == checkpoint || (upTo && c < checkpoint) {
			delete(s.pins, c)
		}
	}
}

func (s *Session) pinSet() table.PinSet { return table.PinSet{Snapshots: s.Pins()} }

// Pins lists the pinned snapshots, ascending.
func (s *Session) Pins() []int64 {
	out := slices.Collect(maps.Values(s.pins))
	slices.Sort(out)
	return slices.Compact(out)
}
