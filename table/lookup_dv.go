package table

import "github.com/RoaringBitmap/roaring/v2"

// DeletionVectors are one bucket's deletion vectors: for each data file
// name, the row positions a read must skip. The map may be handed to a
// compaction commit as the bucket's complete new set (BucketDV.Vectors).
type DeletionVectors map[string]*roaring.Bitmap

// Clone copies the vectors deeply, so the copy can change alone.
func (d DeletionVectors) Clone() DeletionVectors {
	out := make(DeletionVectors, len(d))
	for name, bm := range d {
		out[name] = bm.Clone()
	}
	return out
}

// IsDeleted reports whether the row at pos of file is deleted.
func (d DeletionVectors) IsDeleted(file string, pos int64) bool {
	bm := d[file]
	return bm != nil && pos >= 0 && pos <= int64(^uint32(0)) && bm.Contains(uint32(pos))
}

// Add marks one row deleted and reports whether it was not already.
func (d DeletionVectors) Add(file string, pos int64) bool {
	if pos < 0 || pos > int64(^uint32(0)) {
		panic("deletion vector: row position out of the 32-bit range")
	}
	bm := d[file]
	if bm == nil {
		bm = roaring.New()
		d[file] = bm
	}
	return bm.CheckedAdd(uint32(pos))
}

// Merge adds every deletion of other and reports whether any was new.
func (d DeletionVectors) Merge(other DeletionVectors) bool {
	changed := false
	for name, bm := range other {
		if bm.IsEmpty() {
			continue
		}
		cur := d[name]
		if cur == nil {
			d[name] = bm.Clone()
			changed = true
			continue
		}
		n := cur.GetCardinality()
		cur.Or(bm)
		changed = changed || cur.GetCardinality() != n
	}
	return changed
}

// Remove drops a file's vector, as when the file is rewritten, and reports
// whether it had one.
func (d DeletionVectors) Remove(file string) bool {
	_, ok := d[file]
	delete(d, file)
	return ok
}

// Equal reports whether both hold the same deletions (an empty vector
// counts as none).
func (d DeletionVectors) Equal(other DeletionVectors) bool {
	return d.subsetOf(other) && other.subsetOf(d)
}

func (d DeletionVectors) subsetOf(other DeletionVectors) bool {
	for name, bm := range d {
		if bm.IsEmpty() {
			continue
		}
		o := other[name]
		if o == nil || !bm.Equals(o) {
			return false
		}
	}
	return true
}
