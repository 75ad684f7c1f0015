package compaction

import (
	"fmt"
	"math"
)

// Config is the policy of one table's maintenance. The LSM shape (levels,
// triggers, target file size) comes from the table's schema options.
type Config struct {
	// CommitUser names the session's commits in snapshot files.
	CommitUser string
	// ShapingBudget is how many bytes of new files shaping may write per
	// checkpoint interval (between two barriers); 0 means no limit. A step
	// larger than the whole budget still runs, alone, in an interval of its
	// own, so shaping never starves; the intervals after it repay the excess
	// before shaping resumes, so on average shaping stays within the budget.
	// A section cut by key range counts as one step: the budget must allow
	// all of it before its first step, and the others follow regardless.
	ShapingBudget int64
	// StepBytes bounds the input of one shaping step, so a barrier waits at
	// most that much merging. A compaction is cut between key-disjoint
	// sections, and a larger section by key range between the files of its
	// output level, which rewrites write at no more than StepBytes/2 each
	// (below the table's target file size) so later compactions can be cut
	// too. A step exceeds StepBytes only by a file written larger before, by
	// a section of level-0 rows, or when cut at StepBytes the compaction
	// would outlast the free levels: each barrier round meanwhile takes
	// one, and once none is left rounds merge into level 1 in the sync
	// phase; such a compaction is cut into as many steps as the recent
	// pace of shaping fits in those rounds, each at most 4*StepBytes.
	// 0: DefaultStepBytes, or twice the target file size when that is
	// smaller.
	StepBytes int64
	// TTL, when set, drops rows past their time-to-live.
	TTL *TTL
	// RetainSnapshots is how many of the newest snapshots expiration keeps
	// (besides pinned ones); 0 disables expiration.
	RetainSnapshots int
	// ExpireEvery runs expiration after that many committed barrier rounds;
	// 0 means after every one.
	ExpireEvery int
	// CheckInvariants re-checks every bucket a round or step changed (each key
	// at most once across levels >= 1 with deletion vectors applied, the
	// newest version, no overlap within a level) and that the session's view
	// equals a fresh walk of the table. Costly: for tests and the simulation.
	CheckInvariants bool
	// Jobs, when set, counts the running executor jobs of every maintainer
	// with this configuration, so that whoever removes a table's files
	// after stopping its maintainers can wait until none touches them.
	Jobs *Jobs
}

// TTL is the state time-to-live of a table, with the semantics of the
// subtask store: a row whose write-time column holds t (epoch millis; null
// never expires) is absent from t + Millis on, inclusive.
type TTL struct {
	// Field is the BIGINT write-time column.
	Field  string
	Millis int64
}

// DefaultCommitUser is the commit user when Config leaves it empty.
const DefaultCommitUser = "lakestate-maintenance"

// DefaultStepBytes is the input of a shaping step when Config leaves
// StepBytes at 0: what a checkpoint's sync phase may wait for.
const DefaultStepBytes = 32 << 20

func (c Config) withDefaults(targetFileSize int64) (Config, error) {
	if c.CommitUser == "" {
		c.CommitUser = DefaultCommitUser
	}
	if c.StepBytes == 0 {
		c.StepBytes = min(DefaultStepBytes, 2*targetFileSize)
	}
	switch {
	case c.ShapingBudget < 0:
		return c, fmt.Errorf("compaction: negative shaping budget %d", c.ShapingBudget)
	case c.StepBytes < 0:
		return c, fmt.Errorf("compaction: negative step size %d", c.StepBytes)
	case c.RetainSnapshots < 0 || c.ExpireEvery < 0:
		return c, fmt.Errorf("compaction: negative expiration setting (retain %d, every %d)", c.RetainSnapshots, c.ExpireEvery)
	case c.TTL != nil && (c.TTL.Field == "" || c.TTL.Millis <= 0):
		return c, fmt.Errorf("compaction: TTL needs a field and a positive duration, got %q and %d ms", c.TTL.Field, c.TTL.Millis)
	}
	return c, nil
}

// fileBytes is the size at which the session's rewrites roll to a new file:
// half a step, so that a step can take a file of its output level whole,
// but never above the table's target.
func (c Config) fileBytes(targetFileSize int64) int64 {
	return max(1, min(targetFileSize, c.StepBytes/2))
}

// expiredAt is the write time at or before which a row has expired at now.
func (t *TTL) expiredAt(nowMillis int64) int64 {
	if nowMillis < math.MinInt64+t.Millis {
		return math.MinInt64
	}
	return nowMillis - t.Millis
}
