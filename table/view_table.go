package table

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// View plans a pinned view of a snapshot: its live files per bucket and
// level and the deletion vectors of a deletion-vector table, loaded now.
func (t *Table) View(snapshotID int64) (*View, error) { return t.ViewReusing(snapshotID, nil) }

// ViewReusing is View that shares the opened files (parsed footers and page
// indexes) the previous view of the same table has in common with this
// snapshot; data files never change, so a store moving from snapshot to
// snapshot re-opens only new files. prev stays valid until closed.
func (t *Table) ViewReusing(snapshotID int64, prev *View) (*View, error) {
	files, index, err := t.LiveFiles(snapshotID)
	if err != nil {
		return nil, err
	}
	in := ViewInput{FIO: t.fio, Schema: t.schema, Files: files, BucketDir: t.BucketDir, Reuse: prev}
	if t.schema.DeletionVectors() {
		in.DeletionVectors = map[BucketKey]map[string]*roaring.Bitmap{}
		for _, e := range index {
			if e.IndexType != IndexTypeDeletionVectors || e.Kind != FileAdd {
				continue
			}
			dvs, err := t.ReadDeletionVectors(e)
			if err != nil {
				return nil, fmt.Errorf("view of snapshot %d: %w", snapshotID, err)
			}
			k := BucketKey{Partition: string(e.Partition), Bucket: e.Bucket}
			if in.DeletionVectors[k] == nil {
				in.DeletionVectors[k] = dvs
				continue
			}
			for name, bm := range dvs {
				in.DeletionVectors[k][name] = bm
			}
		}
	}
	return NewView(in)
}
