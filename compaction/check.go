package compaction

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// Check verifies every bucket of the view and that the view equals a fresh
// walk of the table (see Config.CheckInvariants). Tests and the simulation
// call it between rounds.
func (s *Session) Check() error {
	s.mustBeIdle("check")
	var work []bucketChange
	for _, k := range s.trees.sortedKeys() {
		work = append(work, bucketChange{key: k})
	}
	return s.check(work)
}

// check verifies the buckets of work and the view.
func (s *Session) check(work []bucketChange) error {
	var errs []error
	for _, w := range work {
		tr := s.trees[w.key]
		files, err := s.bucketFiles(tr, 0)
		if err == nil {
			err = table.CheckBucket(tr.levels, tr.dvs, files)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("bucket %d: %w", tr.bucket, err))
		}
	}
	if err := s.checkView(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("compaction: invariant violated after snapshot %d: %w", s.seen, err)
	}
	return nil
}

// checkView compares the view with a fresh walk of the newest snapshot. The
// view lags by the level-0 files of data commits not folded yet, so level 0
// is compared only when the view has folded everything.
func (s *Session) checkView() error {
	latest, ok, err := s.t.LatestSnapshotID()
	if err != nil || !ok {
		return err
	}
	fresh, err := s.walk(latest)
	if err != nil {
		return err
	}
	caughtUp := latest == s.seen && len(s.own) == 0
	keys := slices.Collect(maps.Keys(fresh))
	for k := range s.trees {
		if _, ok := fresh[k]; !ok {
			keys = append(keys, k)
		}
	}
	var errs []error
	for _, k := range keys {
		view, walked := s.trees[k], fresh[k]
		if diff := diffTrees(view, walked, caughtUp); diff != "" {
			errs = append(errs, fmt.Errorf("bucket %d: the session's view differs from snapshot %d: %s", k.Bucket, latest, diff))
		}
	}
	return errors.Join(errs...)
}

func diffTrees(view, walked *tree, withLevel0 bool) string {
	files := func(t *tree) map[string]int32 {
		out := map[string]int32{}
		if t == nil {
			return out
		}
		for _, f := range t.levels.AllFiles() {
			if f.Level > 0 || withLevel0 {
				out[f.FileName] = f.Level
			}
		}
		return out
	}
	dvs := func(t *tree) table.DeletionVectors {
		if t == nil {
			return table.DeletionVectors{}
		}
		return t.dvs
	}
	if a, b := files(view), files(walked); !maps.Equal(a, b) {
		return fmt.Sprintf("files %v, walk %v", a, b)
	}
	if !dvs(view).Equal(dvs(walked)) {
		return "deletion vectors differ"
	}
	return ""
}
