package table

import "github.com/RoaringBitmap/roaring/v2"

// BucketFiles is what the LSM primitives need from one bucket's data files:
// sequential reads in key order, point lookups of keys, and writers of new
// files at a level. Keys here are order-preserving encodings (see KeyBatch):
// bytes.Compare orders them as Paimon orders the keys.
type BucketFiles interface {
	// Open reads the rows of f in key order, skipping the positions in
	// deleted (nil: none).
	Open(f DataFileMeta, deleted *roaring.Bitmap) (RowIterator, error)
	// OpenRange is Open for a caller that wants only the rows with encoded
	// keys in [lo, hi] (nil: unbounded): it may skip rows outside, through
	// the file's page index, but need not skip them all.
	OpenRange(f DataFileMeta, deleted *roaring.Bitmap, lo, hi []byte) (RowIterator, error)
	// ReadKeys calls fn with the key of each row of f not in deleted, in
	// key order; the key is valid only during the call.
	ReadKeys(f DataFileMeta, deleted *roaring.Bitmap, fn func(key []byte)) error
	// FindKeys returns, for each of keys (encoded, ascending, unique), its
	// row position in f, or -1 when f lacks it. Deletion vectors are not
	// applied: the caller decides what a deleted position means.
	FindKeys(f DataFileMeta, keys [][]byte) ([]int64, error)
	// KeyFilter returns f's key filter, or nil when the bucket keeps none:
	// a lookup does not look for the keys it rules out.
	KeyFilter(f DataFileMeta) (*KeyFilter, error)
	// EncodeKey turns a serialized key BinaryRow (DataFileMeta.MinKey,
	// MaxKey) into the encoding of RowIterator.Key.
	EncodeKey(binaryRow []byte) ([]byte, error)
	// NewWriter starts the output of one rewrite at level: rows arrive in
	// key order, and the writer rolls to a new file past the target size.
	NewWriter(level int) (RowWriter, error)
}

// RowIterator walks one data file's rows in key order.
type RowIterator interface {
	// Next advances to the next row; false at the end or on error.
	Next() bool
	// Key is the current row's encoded key; valid until Next.
	Key() []byte
	Seq() int64
	Kind() ValueKind
	// Pos is the current row's position in the file, counting every row.
	Pos() int64
	Err() error
	Close() error
}

// RowWriter receives the rows a rewrite keeps.
type RowWriter interface {
	// Write copies the current row of src, an iterator of the same
	// BucketFiles, with its sequence number and kind.
	Write(src RowIterator) error
	// Roll closes the current file, if any; the next row starts a new one.
	Roll() error
	// Finish closes the last file and returns the metadata of every file
	// written (none when no row was written).
	Finish() ([]DataFileMeta, error)
	// Abort removes whatever was written.
	Abort()
}
