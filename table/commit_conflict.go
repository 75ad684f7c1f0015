package table

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// checkDelta validates a commit's entries on their own, before any I/O, and
// fills what a writer may leave unset (the partition row of an unpartitioned
// table, the bucket count).
func (t *Table) checkDelta(kind CommitKind, delta []ManifestEntry, dvs []BucketDV) error {
	if kind == CommitAppend && len(dvs) > 0 {
		return fmt.Errorf("an APPEND commit carries no deletion vectors")
	}
	keyArity := len(t.schema.TrimmedPrimaryKeys())
	for i := range delta {
		e := &delta[i]
		if kind == CommitAppend && e.Kind != FileAdd {
			return fmt.Errorf("an APPEND commit only adds files; %s is a DELETE", e.File.FileName)
		}
		if err := t.checkPartition(&e.Partition); err != nil {
			return fmt.Errorf("file %s: %w", e.File.FileName, err)
		}
		if e.TotalBuckets == 0 {
			e.TotalBuckets = int32(t.buckets)
		}
		f := &e.File
		switch {
		case f.FileName == "" || strings.ContainsRune(f.FileName, '/'):
			return fmt.Errorf("bad data file name %q", f.FileName)
		case e.Bucket < 0 || int(e.Bucket) >= t.buckets:
			return fmt.Errorf("file %s: bucket %d outside [0, %d)", f.FileName, e.Bucket, t.buckets)
		case int(e.TotalBuckets) != t.buckets:
			return fmt.Errorf("file %s: written for %d buckets, the table has %d", f.FileName, e.TotalBuckets, t.buckets)
		case f.Level < 0:
			return fmt.Errorf("file %s: level %d", f.FileName, f.Level)
		case f.SchemaID > t.schema.ID:
			return fmt.Errorf("file %s: schema %d is newer than the table's %d", f.FileName, f.SchemaID, t.schema.ID)
		case f.RowCount < 0 || f.FileSize < 0:
			return fmt.Errorf("file %s: negative size or row count", f.FileName)
		case f.MinSequenceNumber > f.MaxSequenceNumber:
			return fmt.Errorf("file %s: sequence numbers [%d, %d]", f.FileName, f.MinSequenceNumber, f.MaxSequenceNumber)
		}
		if e.Kind == FileAdd {
			for _, k := range [][]byte{f.MinKey, f.MaxKey} {
				row, err := ParseBinaryRow(k)
				if err != nil {
					return fmt.Errorf("file %s: key: %w", f.FileName, err)
				}
				if row.Arity() != keyArity {
					return fmt.Errorf("file %s: key of arity %d, the primary key has %d fields", f.FileName, row.Arity(), keyArity)
				}
			}
			if t.keyCmp(f.MinKey, f.MaxKey) > 0 {
				return fmt.Errorf("file %s: min key above max key", f.FileName)
			}
		}
	}
	for i := range dvs {
		d := &dvs[i]
		if err := t.checkPartition(&d.Partition); err != nil {
			return fmt.Errorf("deletion vectors of bucket %d: %w", d.Bucket, err)
		}
		if d.Bucket < 0 || int(d.Bucket) >= t.buckets {
			return fmt.Errorf("deletion vectors of bucket %d outside [0, %d)", d.Bucket, t.buckets)
		}
		for j := range i {
			if dvs[j].Bucket == d.Bucket && bytes.Equal(dvs[j].Partition, d.Partition) {
				return fmt.Errorf("two deletion-vector sets for bucket %d", d.Bucket)
			}
		}
	}
	return nil
}

// checkPartition verifies a partition row has the partition arity; nil is
// the empty row of an unpartitioned table.
func (t *Table) checkPartition(p *[]byte) error {
	if *p == nil && len(t.schema.PartitionKeys) == 0 {
		*p = EmptyBinaryRow()
		return nil
	}
	row, err := ParseBinaryRow(*p)
	if err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if row.Arity() != len(t.schema.PartitionKeys) {
		return fmt.Errorf("partition row of arity %d, the table has %d partition keys", row.Arity(), len(t.schema.PartitionKeys))
	}
	return nil
}

type bucketOf struct {
	partition string
	bucket    int32
}

// checkConflicts checks a commit against the live files it applies to
// (Paimon's conflict detection): every deleted file must be live and no file
// may be added twice; for a change that touches a level >= 1, no two files
// of such a level of a bucket may overlap in key range afterwards; every
// deletion vector must name a live data file of its bucket and stay within
// its rows, and a removed file must not keep one. Failures wrap ErrConflict.
func (t *Table) checkConflicts(kind CommitKind, live *liveState, delta []ManifestEntry, dvs []BucketDV) error {
	// The fold of live ++ delta, as an overlay: identity -> present after.
	overlay := make(map[fileIdentity]*ManifestEntry, len(delta))
	present := func(id fileIdentity) bool {
		if e, ok := overlay[id]; ok {
			return e != nil
		}
		_, ok := live.files.m[id]
		return ok
	}
	touched := map[bucketOf]map[int32]bool{} // levels >= 1 a change adds to
	for i := range delta {
		e := &delta[i]
		id := identityOf(e)
		switch e.Kind {
		case FileAdd:
			if present(id) {
				return fmt.Errorf("%w: file %s is already live at level %d of bucket %d", ErrConflict, e.File.FileName, e.File.Level, e.Bucket)
			}
			overlay[id] = e
			if e.File.Level >= 1 {
				b := bucketOf{string(e.Partition), e.Bucket}
				if touched[b] == nil {
					touched[b] = map[int32]bool{}
				}
				touched[b][e.File.Level] = true
			}
		case FileDelete:
			if !present(id) {
				return fmt.Errorf("%w: trying to delete file %s (level %d, bucket %d), which is not live", ErrConflict, e.File.FileName, e.File.Level, e.Bucket)
			}
			overlay[id] = nil
		}
	}
	if kind == CommitCompact {
		for _, e := range live.files.m {
			if int(e.TotalBuckets) != t.buckets {
				return fmt.Errorf("%w: live file %s was written for %d buckets, the table has %d", ErrConflict, e.File.FileName, e.TotalBuckets, t.buckets)
			}
		}
	}
	// Group the files after the change by bucket for the touched buckets.
	after := map[bucketOf][]*ManifestEntry{}
	if len(touched) > 0 || len(dvs) > 0 {
		for id, e := range live.files.m {
			if _, changed := overlay[id]; changed {
				continue
			}
			b := bucketOf{id.partition, id.bucket}
			after[b] = append(after[b], &e)
		}
		for _, e := range overlay {
			if e != nil {
				b := bucketOf{string(e.Partition), e.Bucket}
				after[b] = append(after[b], e)
			}
		}
	}
	for b, levels := range touched {
		if err := t.checkLevelOverlaps(after[b], levels); err != nil {
			return err
		}
	}
	return t.checkDVs(live, delta, dvs, after)
}

// checkLevelOverlaps finds two files of one of the given levels whose key
// ranges intersect.
func (t *Table) checkLevelOverlaps(files []*ManifestEntry, levels map[int32]bool) error {
	byLevel := map[int32][]*ManifestEntry{}
	for _, e := range files {
		if levels[e.File.Level] {
			byLevel[e.File.Level] = append(byLevel[e.File.Level], e)
		}
	}
	for level, run := range byLevel {
		slices.SortFunc(run, func(a, b *ManifestEntry) int { return t.keyCmp(a.File.MinKey, b.File.MinKey) })
		for i := 0; i+1 < len(run); i++ {
			if t.keyCmp(run[i].File.MaxKey, run[i+1].File.MinKey) >= 0 {
				return fmt.Errorf("%w: LSM conflict: files %s and %s overlap at level %d of bucket %d",
					ErrConflict, run[i].File.FileName, run[i+1].File.FileName, level, run[i].Bucket)
			}
		}
	}
	return nil
}

// checkDVs validates the new deletion-vector sets against the files live
// after the change, and that no removed file keeps a vector in an old set.
func (t *Table) checkDVs(live *liveState, delta []ManifestEntry, dvs []BucketDV, after map[bucketOf][]*ManifestEntry) error {
	replaced := map[bucketOf]bool{}
	for _, d := range dvs {
		b := bucketOf{string(d.Partition), d.Bucket}
		replaced[b] = true
		rows := map[string]int64{}
		for _, e := range after[b] {
			rows[e.File.FileName] = e.File.RowCount
		}
		for name, bm := range d.Vectors {
			if bm == nil || bm.IsEmpty() {
				continue
			}
			n, ok := rows[name]
			if !ok {
				return fmt.Errorf("%w: deletion vector for %s, which is not a live file of bucket %d", ErrConflict, name, d.Bucket)
			}
			if int64(bm.Maximum()) >= n {
				return fmt.Errorf("%w: deletion vector of %s marks row %d of %d", ErrConflict, name, bm.Maximum(), n)
			}
		}
	}
	removed := map[bucketOf]map[string]bool{}
	for _, e := range delta {
		if e.Kind != FileDelete {
			continue
		}
		b := bucketOf{string(e.Partition), e.Bucket}
		if replaced[b] {
			continue
		}
		if removed[b] == nil {
			removed[b] = map[string]bool{}
		}
		removed[b][e.File.FileName] = true
	}
	for _, e := range delta {
		if b := (bucketOf{string(e.Partition), e.Bucket}); e.Kind == FileAdd && removed[b] != nil {
			delete(removed[b], e.File.FileName) // re-added at another level
		}
	}
	for _, ie := range live.index {
		if ie.IndexType != IndexTypeDeletionVectors {
			continue
		}
		gone := removed[bucketOf{string(ie.Partition), ie.Bucket}]
		for _, r := range ie.DVRanges {
			if gone[r.DataFile] {
				return fmt.Errorf("%w: file %s is removed but keeps its deletion vector; commit bucket %d's new deletion-vector set", ErrConflict, r.DataFile, ie.Bucket)
			}
		}
	}
	return nil
}
