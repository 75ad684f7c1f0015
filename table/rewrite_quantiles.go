package table

import "fmt"

// KeyQuantiles cuts f's keys into pieces of about equal row counts: it
// returns the keys at rows RowCount*i/pieces, i = 1..pieces-1, as serialized
// key BinaryRows (DataFileMeta.MinKey's form), ascending and unique, so each
// can end one KeyBounds range (UpTo) and start the next (After). It decodes
// the key columns of one page per key, through the lookup cache when there
// is one, and ignores deletion vectors: a bound needs a key's order, not
// its row. A file of fewer rows than pieces gives fewer keys; none for
// pieces < 2. The last row's key is never returned: a range after it would
// be empty.
func (b *DataBucketFiles) KeyQuantiles(f DataFileMeta, pieces int) ([][]byte, error) {
	if pieces < 2 || f.RowCount < 2 {
		return nil, nil
	}
	d, release, err := b.lookupFile(f)
	if err != nil {
		return nil, err
	}
	defer release()
	if d.NumRows() != f.RowCount {
		return nil, fmt.Errorf("data file %s: %d rows, manifest says %d", b.path(f), d.NumRows(), f.RowCount)
	}
	vecs := make([]*colVec, len(d.keyTypes))
	for k, t := range d.keyTypes {
		vecs[k] = newColVec(t)
	}
	datums := make([]Datum, len(d.keyTypes))
	var out [][]byte
	last := int64(-1)
	for i := 1; i < pieces; i++ {
		pos := f.RowCount * int64(i) / int64(pieces)
		if pos <= last || pos >= f.RowCount-1 {
			continue
		}
		if err := d.readKeyCols(pos, pos+1, vecs); err != nil {
			return nil, fmt.Errorf("key quantiles of %s: %w", b.path(f), err)
		}
		row, err := keyRowAt0(vecs, d.keyTypes, datums)
		if err != nil {
			return nil, fmt.Errorf("key quantiles of %s: %w", b.path(f), err)
		}
		out = append(out, row)
		last = pos
	}
	return out, nil
}

// keyRowAt0 serializes the first row of key vectors as a BinaryRow.
func keyRowAt0(vecs []*colVec, types []DataType, datums []Datum) ([]byte, error) {
	for k, v := range vecs {
		a, err := v.arrow()
		if err != nil {
			return nil, err
		}
		defer a.Release()
		if datums[k], err = DatumOf(a, 0, types[k]); err != nil {
			return nil, err
		}
	}
	return EncodeBinaryRow(types, datums), nil
}
