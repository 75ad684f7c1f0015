package compaction

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// tree is the session's view of one bucket: its LSM levels and its complete
// deletion-vector set, both as of the last snapshot the session folded.
type tree struct {
	key       table.BucketKey
	partition []byte
	bucket    int32
	dir       string
	levels    *table.Levels
	dvs       table.DeletionVectors
	// pending are the remaining steps of the shaping compaction in
	// progress, run before anything is picked again.
	pending []shapingStep
	// lookups keeps the files barrier rounds look keys up in open across
	// rounds, so a round pays for the pages its keys touch, not for opening
	// the deep files again.
	lookups *table.DataFileCache
	// filters keeps a key filter of each file the lookups may search, so
	// they skip the files that cannot hold a key.
	filters *table.KeyFilters
}

// retainLookups closes the cached files that left the tree and forgets
// their key filters.
func (t *tree) retainLookups() {
	live, livePaths := map[string]bool{}, map[string]bool{}
	for _, f := range t.levels.AllFiles() {
		live[f.FileName] = true
		livePaths[path.Join(t.dir, f.FileName)] = true
	}
	t.lookups.Retain(func(p string) bool { return livePaths[p] })
	t.filters.Retain(func(name string) bool { return live[name] })
}

// close releases what the trees hold open.
func (ts trees) close() {
	for _, t := range ts {
		t.lookups.Close()
	}
}

// trees is the view of every bucket of the table.
type trees map[table.BucketKey]*tree

// sortedKeys lists the buckets in a fixed order, so rounds and picks do not
// depend on map iteration.
func (ts trees) sortedKeys() []table.BucketKey {
	keys := slices.Collect(maps.Keys(ts))
	slices.SortFunc(keys, func(a, b table.BucketKey) int {
		if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return cmp.Compare(a.Bucket, b.Bucket)
	})
	return keys
}

// tree returns the view's tree of a bucket, creating an empty one.
func (s *Session) tree(partition []byte, bucket int32) (*tree, error) {
	return s.treeIn(s.trees, partition, bucket)
}

func (s *Session) treeIn(ts trees, partition []byte, bucket int32) (*tree, error) {
	k := table.BucketKey{Partition: string(partition), Bucket: bucket}
	if t, ok := ts[k]; ok {
		return t, nil
	}
	dir, err := s.t.BucketDir(partition, bucket)
	if err != nil {
		return nil, fmt.Errorf("compaction: directory of bucket %d: %w", bucket, err)
	}
	levels, err := table.NewLevels(s.cmp, nil, s.opts.NumLevels)
	if err != nil {
		return nil, err
	}
	t := &tree{key: k, partition: partition, bucket: bucket, dir: dir, levels: levels, dvs: table.DeletionVectors{},
		lookups: table.NewDataFileCache(s.t.FileIO(), s.schema), filters: table.NewKeyFilters()}
	ts[k] = t
	return t, nil
}

// walk builds the trees of a snapshot from a full walk of its manifests
// and the deletion vectors of its index manifest.
func (s *Session) walk(id int64) (trees, error) {
	live, index, err := s.t.LiveFiles(id)
	if err != nil {
		return nil, fmt.Errorf("compaction: live files of snapshot %d: %w", id, err)
	}
	ts := trees{}
	for _, es := range table.GroupByBucket(live) {
		tr, err := s.treeIn(ts, es[0].Partition, es[0].Bucket)
		if err != nil {
			return nil, err
		}
		if err := tr.levels.ApplyEntries(es); err != nil {
			return nil, fmt.Errorf("compaction: bucket %d of snapshot %d: %w", es[0].Bucket, id, err)
		}
	}
	for _, e := range index {
		if e.Kind != table.FileAdd || e.IndexType != table.IndexTypeDeletionVectors {
			continue
		}
		dvs, err := s.t.ReadDeletionVectors(e)
		if err != nil {
			return nil, fmt.Errorf("compaction: deletion vectors of bucket %d: %w", e.Bucket, err)
		}
		tr, err := s.treeIn(ts, e.Partition, e.Bucket)
		if err != nil {
			return nil, err
		}
		tr.dvs = table.DeletionVectors(dvs)
	}
	return ts, nil
}

// backpressure is the verdict over every bucket.
func (s *Session) backpressure() Backpressure {
	var b Backpressure
	for _, t := range s.trees {
		b.SortedRuns = max(b.SortedRuns, t.levels.NumSortedRuns())
		if t.levels.ShouldWaitForCompaction(s.opts.NumSortedRunStopTrigger) {
			b.Stalled = true
		}
	}
	return b
}

// Backpressure tells the store whether to slow its intake: some bucket has
// more sorted runs than the table's stop trigger (num-sorted-run.stop-trigger).
type Backpressure struct {
	Stalled    bool
	SortedRuns int // the most sorted runs of any bucket
}
