package table

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// ReadKeys calls fn with the encoded key of each row of f not in deleted, in
// key order; the key is valid only during the call. Only the key columns are
// decoded: a file carried up a level without rewriting needs nothing else.
// The file is read through the lookup cache, when there is one: the deeper
// levels it moves to are where later lookups search.
func (b *DataBucketFiles) ReadKeys(f DataFileMeta, deleted *roaring.Bitmap, fn func(key []byte)) error {
	d, release, err := b.lookupFile(f)
	if err != nil {
		return err
	}
	defer release()
	if d.NumRows() != f.RowCount {
		return fmt.Errorf("data file %s: %d rows, manifest says %d", b.path(f), d.NumRows(), f.RowCount)
	}
	vecs := make([]*colVec, len(d.keyTypes))
	for k, t := range d.keyTypes {
		vecs[k] = newColVec(t)
	}
	var key []byte
	for lo := int64(0); lo < d.NumRows(); lo += bucketFilesChunkRows {
		hi := min(lo+bucketFilesChunkRows, d.NumRows())
		if err := d.readKeyCols(lo, hi, vecs); err != nil {
			return err
		}
		for r := range int(hi - lo) {
			if deleted != nil && deleted.Contains(uint32(lo)+uint32(r)) {
				continue
			}
			key = key[:0]
			for k, t := range d.keyTypes {
				key = vecs[k].appendKey(key, t, r)
			}
			fn(key)
		}
	}
	return nil
}
