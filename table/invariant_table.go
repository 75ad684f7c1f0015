package table

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CheckTable checks a snapshot of a table bucket by bucket: the files of
// each level >= 1 must not overlap, and in a deletion-vector table every
// bucket must pass CheckBucket and every deletion-vector file must belong to
// a bucket with live files. It reads every level >= 1 file, so it is for
// tests and the simulation, not for a hot path.
func CheckTable(t *Table, snapshotID int64) error {
	s := t.Schema()
	o, err := CompactionOptionsOf(s)
	if err != nil {
		return err
	}
	var keyTypes []DataType
	for _, name := range s.TrimmedPrimaryKeys() {
		keyTypes = append(keyTypes, s.Fields[s.FieldIndex(name)].Type)
	}
	cmp := NewKeyComparator(keyTypes)
	entries, index, err := t.LiveFiles(snapshotID)
	if err != nil {
		return err
	}
	buckets := GroupByBucket(entries)
	dvFiles := make(map[BucketKey]IndexManifestEntry)
	if s.DeletionVectors() {
		for _, e := range index {
			if e.IndexType == IndexTypeDeletionVectors {
				dvFiles[BucketKey{Partition: string(e.Partition), Bucket: e.Bucket}] = e
			}
		}
	}
	var errs []error
	for k, e := range dvFiles {
		if _, ok := buckets[k]; !ok {
			errs = append(errs, fmt.Errorf("bucket %d of partition %x: deletion-vector file %s but no live data files", k.Bucket, k.Partition, e.FileName))
		}
	}
	keys := make([]BucketKey, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b BucketKey) int {
		if c := strings.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return int(a.Bucket) - int(b.Bucket)
	})
	for _, k := range keys {
		if err := checkTableBucket(t, k, buckets[k], dvFiles, cmp, o); err != nil {
			errs = append(errs, fmt.Errorf("bucket %d of partition %x: %w", k.Bucket, k.Partition, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("table %s, snapshot %d: %w", t.Dir(), snapshotID, errors.Join(errs...))
	}
	return nil
}

func checkTableBucket(t *Table, k BucketKey, entries []ManifestEntry, dvFiles map[BucketKey]IndexManifestEntry, cmp KeyComparator, o CompactionOptions) error {
	l, err := NewLevelsFromEntries(cmp, entries, o.NumLevels)
	if err != nil || !o.DeletionVectors {
		return err
	}
	dvs := DeletionVectors{}
	if e, ok := dvFiles[k]; ok {
		if dvs, err = t.ReadDeletionVectors(e); err != nil {
			return err
		}
	}
	dir, err := t.BucketDir([]byte(k.Partition), k.Bucket)
	if err != nil {
		return err
	}
	files, err := NewDataBucketFiles(t.FileIO(), dir, t.Schema(), BucketFilesOptions{TargetFileSize: o.TargetFileSize, NewFileName: t.NewDataFileName})
	if err != nil {
		return err
	}
	return CheckBucket(l, dvs, files)
}
