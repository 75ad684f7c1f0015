package table

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// ReadKeys calls fn with the encoded key of each row of f not in deleted, in
// key order; the key is valid only during the call. Only the key columns are
// decoded: a file carried up a level without rewriting needs nothing else.
// The file is read through the lookup cache, when there is one: the deeper
// levels it moves to are where later lookups search. A read of every row
// (deleted empty) also makes the file's key filter, with KeyFilters.
func (b *DataBucketFiles) ReadKeys(f DataFileMeta, deleted *roaring.Bitmap, fn func(key []byte)) error {
	s := b.opts.KeyFilters
	_, err := b.readKeys(f, deleted, s != nil && (deleted == nil || deleted.IsEmpty()) && s.get(f) == nil, fn)
	return err
}

// readKeys is ReadKeys, which with filter (deleted must then be empty) also
// makes f's key filter, keeps it in KeyFilters and returns it.
func (b *DataBucketFiles) readKeys(f DataFileMeta, deleted *roaring.Bitmap, filter bool, fn func(key []byte)) (*KeyFilter, error) {
	d, release, err := b.lookupFile(f)
	if err != nil {
		return nil, err
	}
	defer release()
	if d.NumRows() != f.RowCount {
		return nil, fmt.Errorf("data file %s: %d rows, manifest says %d", b.path(f), d.NumRows(), f.RowCount)
	}
	var kb *keyFilterBuilder
	if filter {
		if deleted != nil && !deleted.IsEmpty() {
			return nil, fmt.Errorf("data file %s: a key filter of a read that skips rows", b.path(f))
		}
		kb = &keyFilterBuilder{hashes: make([]uint64, 0, f.RowCount)}
	}
	vecs := make([]*colVec, len(d.keyTypes))
	for k, t := range d.keyTypes {
		vecs[k] = newColVec(t)
	}
	var key []byte
	for lo := int64(0); lo < d.NumRows(); lo += bucketFilesChunkRows {
		hi := min(lo+bucketFilesChunkRows, d.NumRows())
		if err := d.readKeyCols(lo, hi, vecs); err != nil {
			return nil, err
		}
		for r := range int(hi - lo) {
			if deleted != nil && deleted.Contains(uint32(lo)+uint32(r)) {
				continue
			}
			key = key[:0]
			for k, t := range d.keyTypes {
				key = vecs[k].appendKey(key, t, r)
			}
			if kb != nil {
				kb.add(key)
			}
			fn(key)
		}
	}
	if kb == nil {
		return nil, nil
	}
	flt, err := kb.finish(f)
	if err != nil {
		return nil, err
	}
	b.opts.KeyFilters.put(f.FileName, flt)
	return flt, nil
}
