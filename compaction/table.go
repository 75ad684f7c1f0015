package compaction

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lakestate/lakestate/table"
)

// Table is what a session needs of the table it maintains; *table.Table
// provides it.
type Table interface {
	Schema() *table.Schema
	FileIO() table.FileIO
	LatestSnapshotID() (int64, bool, error)
	Snapshot(id int64) (*table.Snapshot, error)
	ReadDelta(snapshotID int64) ([]table.ManifestEntry, string, error)
	LiveFiles(snapshotID int64) ([]table.ManifestEntry, []table.IndexManifestEntry, error)
	ReadDeletionVectors(e table.IndexManifestEntry) (map[string]*roaring.Bitmap, error)
	BucketDir(partition []byte, bucket int32) (string, error)
	NewDataFileName() string
	CommitCompact(ch table.CompactChange, c table.CommitInfo) (table.CommitResult, error)
	Expire(keep int, pins table.PinSet) (table.ExpireResult, error)
}
