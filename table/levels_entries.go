package table

import "fmt"

// BucketKey names one LSM tree of a table: a serialized partition BinaryRow
// (as a string, so it can key a map) and a bucket.
type BucketKey struct {
	Partition string
	Bucket    int32
}

// EntryBucket returns the tree an entry belongs to.
func EntryBucket(e ManifestEntry) BucketKey {
	return BucketKey{Partition: string(e.Partition), Bucket: e.Bucket}
}

// GroupByBucket splits entries by the tree they belong to, keeping their
// order within each tree.
func GroupByBucket(entries []ManifestEntry) map[BucketKey][]ManifestEntry {
	out := make(map[BucketKey][]ManifestEntry)
	for _, e := range entries {
		k := EntryBucket(e)
		out[k] = append(out[k], e)
	}
	return out
}

// NewLevelsFromEntries builds the tree of one bucket from its live entries
// (ADD only, as a full listing yields them).
func NewLevelsFromEntries(cmp KeyComparator, entries []ManifestEntry, numLevels int) (*Levels, error) {
	files := make([]DataFileMeta, 0, len(entries))
	for i, e := range entries {
		if e.Kind != FileAdd {
			return nil, fmt.Errorf("levels: live entry %s has kind %d, want ADD", e.File.FileName, e.Kind)
		}
		if i > 0 && EntryBucket(e) != EntryBucket(entries[0]) {
			return nil, fmt.Errorf("levels: entry %s belongs to bucket %d, not %d of the first entry",
				e.File.FileName, e.Bucket, entries[0].Bucket)
		}
		files = append(files, e.File)
	}
	return NewLevels(cmp, files, numLevels)
}

// ApplyEntries applies one commit's delta entries of this bucket: DELETE
// entries leave the tree, ADD entries join it, as one change.
func (l *Levels) ApplyEntries(entries []ManifestEntry) error {
	var deleted, added []DataFileMeta
	for _, e := range entries {
		switch e.Kind {
		case FileDelete:
			deleted = append(deleted, e.File)
		case FileAdd:
			added = append(added, e.File)
		default:
			return fmt.Errorf("levels: entry %s has unknown kind %d", e.File.FileName, e.Kind)
		}
	}
	return l.Apply(deleted, added)
}
