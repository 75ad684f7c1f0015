package sim

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// invariantText is how compaction reports a broken level invariant
// (Config.CheckInvariants): a failed barrier round declines the checkpoint
// with it, a failed shaping step logs it.
const invariantText = "invariant violated"

// checkCompactors checks one compactor per table: every COMPACT snapshot of
// every paimon state table of the run was committed by the maintenance
// session, and every APPEND by the store. Snapshots already checked are
// skipped; expired ones are gone and were checked when they were new, as
// long as checks run more often than expiration. A simulation checks
// between steps, when no job runs; the real system only once the run is
// released, since its jobs run on other goroutines.
func (e *env) checkCompactors(j *job) {
	if j == nil {
		return
	}
	if e.sim == nil && !j.released {
		e.check.fail(fmt.Errorf("one compactor: the tables of run %d checked while its stores may be open or its maintenance jobs running", j.run))
		return
	}
	for i, kt := range j.keyed {
		b, ok := kt.backend.(*subtask.PaimonBackend)
		if !ok {
			continue
		}
		for _, name := range []string{aggLayout.Name, lastLayout.Name, subsLayout.Name, winLayout.Name} {
			t, ok := b.Table(name)
			if !ok {
				continue
			}
			if err := e.checkTableCommits(t); err != nil {
				e.check.fail(fmt.Errorf("one compactor: run %d, keyed %d, table %s: %w", j.run, i, name, err))
				return
			}
		}
	}
}

func (e *env) checkTableCommits(t *table.Table) error {
	latest, ok, err := t.LatestSnapshotID()
	if err != nil || !ok {
		return nil // a table being written; the next check sees it
	}
	first := e.checkedSnapshots[t.Dir()] + 1
	if earliest, ok, err := t.EarliestSnapshotID(); err == nil && ok {
		first = max(first, earliest)
	}
	for id := first; id <= latest; id++ {
		s, err := t.Snapshot(id)
		if err != nil {
			continue // expired meanwhile
		}
		switch {
		case s.CommitKind == table.CommitCompact && s.CommitUser != compaction.DefaultCommitUser:
			return fmt.Errorf("snapshot %d is a COMPACT by %q, not the maintenance session", id, s.CommitUser)
		case s.CommitKind == table.CommitAppend && s.CommitUser != "subtask":
			return fmt.Errorf("snapshot %d is an APPEND by %q, not the store", id, s.CommitUser)
		}
	}
	e.checkedSnapshots[t.Dir()] = latest
	return nil
}

// logWatch is the actor systems' log handler: a log record that reports a
// broken compaction invariant fails the run.
type logWatch struct {
	env   *env
	attrs []slog.Attr
}

func (h *logWatch) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *logWatch) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	if s := b.String(); strings.Contains(s, invariantText) {
		h.env.check.fail(fmt.Errorf("compaction invariant: %s", s))
	}
	return nil
}

func (h *logWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return &logWatch{env: h.env, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *logWatch) WithGroup(string) slog.Handler { return h }
