package table

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// FileRows are decoded rows of one data file, in file order.
type FileRows struct {
	Rows  arrow.Record // full rows in schema order, Arrow types per ArrowSchema
	Seqs  []int64
	Kinds []ValueKind
	First int64 // file row position of Rows' first row
}

// Release releases the record.
func (r *FileRows) Release() { r.Rows.Release() }

// ReadRange decodes file rows [lo,hi) with their sequence numbers and kinds.
func (d *DataFile) ReadRange(lo, hi int64) (*FileRows, error) {
	var c rowChunk
	if err := d.readChunk(lo, hi, &c); err != nil {
		return nil, err
	}
	rec, err := vecsRecord(d.schema, c.fields)
	if err != nil {
		return nil, err
	}
	return &FileRows{Rows: rec, Seqs: c.seqs, Kinds: c.kinds, First: lo}, nil
}

// ReadAll decodes every row of the file.
func (d *DataFile) ReadAll() (*FileRows, error) { return d.ReadRange(0, d.numRows) }

// rowChunk holds decoded rows [first, first+n) of a data file in buffers that
// the next readChunk into it reuses: whoever keeps rows copies them first.
type rowChunk struct {
	first   int64
	n       int
	seqs    []int64     // aliases seqVec
	kinds   []ValueKind // aliases kindVec
	fields  []*colVec   // one per schema field
	seqVec  *colVec
	kindVec *colVec
}

// readChunk decodes file rows [lo,hi) with their sequence numbers and kinds
// into c, reusing its buffers.
func (d *DataFile) readChunk(lo, hi int64, c *rowChunk) error {
	if lo < 0 || hi > d.numRows || lo > hi {
		return fmt.Errorf("data file %s: rows [%d,%d) of %d", d.path, lo, hi, d.numRows)
	}
	read := func(col int, v *colVec) error { return d.readRange(col, lo, hi, v) }
	if c.seqVec == nil {
		c.seqVec, c.kindVec = newColVec(BigInt().NotNull()), newColVec(TinyInt().NotNull())
	}
	seqs, kinds, err := d.readSeqKinds(read, c.seqVec, c.kindVec)
	if err != nil {
		return err
	}
	if c.fields == nil {
		c.fields = make([]*colVec, len(d.schema.Fields))
		for i, f := range d.schema.Fields {
			c.fields[i] = newColVec(f.Type)
		}
	}
	if err := d.readFieldVecs(int(hi-lo), c.fields, read); err != nil {
		return err
	}
	c.first, c.n, c.seqs, c.kinds = lo, int(hi-lo), seqs, kinds
	return nil
}

// readSeqKinds decodes the sequence and kind columns into seq and kind
// (reset first); the slices returned alias them.
func (d *DataFile) readSeqKinds(read func(c int, v *colVec) error, seq, kind *colVec) ([]int64, []ValueKind, error) {
	seq.reset()
	if err := read(d.seqCol, seq); err != nil {
		return nil, nil, err
	}
	kind.reset()
	if err := read(d.kindCol, kind); err != nil {
		return nil, nil, err
	}
	if seq.nulls > 0 || kind.nulls > 0 {
		return nil, nil, corruptError(d.path, fmt.Errorf("null %s or %s", seqColumnName, kindColumnName))
	}
	kinds := unsafe.Slice((*ValueKind)(unsafe.Pointer(unsafe.SliceData(kind.fixed))), kind.n)
	for i, k := range kinds {
		if k < KindInsert || k > KindDelete {
			return nil, nil, corruptError(d.path, fmt.Errorf("row %d: %s %d", i, kindColumnName, k))
		}
	}
	return int64s(seq), kinds, nil
}

func int64s(v *colVec) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(v.fixed))), v.n)
}

// readFieldVecs decodes every schema field with read into vecs (one per
// field, of its type; reset first); n is the row count.
func (d *DataFile) readFieldVecs(n int, vecs []*colVec, read func(c int, v *colVec) error) error {
	for i, f := range d.schema.Fields {
		v := vecs[i]
		v.reset()
		if c := d.fieldCols[i]; c >= 0 {
			if err := read(c, v); err != nil {
				return err
			}
		} else {
			if !f.Type.Nullable {
				return corruptError(d.path, fmt.Errorf("lacks NOT NULL field %q", f.Name))
			}
			for j := 0; j < n; j++ {
				v.appendNull()
			}
		}
		if v.n != n {
			return corruptError(d.path, fmt.Errorf("field %q decoded %d rows, want %d", f.Name, v.n, n))
		}
	}
	return nil
}

// readKeyCols decodes the key columns of file rows [lo,hi) into vecs (one
// per trimmed key field, of its type; reset first): what a step that only
// needs keys reads.
func (d *DataFile) readKeyCols(lo, hi int64, vecs []*colVec) error {
	if lo < 0 || hi > d.numRows || lo > hi {
		return fmt.Errorf("data file %s: rows [%d,%d) of %d", d.path, lo, hi, d.numRows)
	}
	for k, c := range d.keyCols {
		vecs[k].reset()
		if err := d.readRange(c, lo, hi, vecs[k]); err != nil {
			return err
		}
		if vecs[k].n != int(hi-lo) {
			return corruptError(d.path, fmt.Errorf("key column %d decoded %d rows, want %d", c, vecs[k].n, hi-lo))
		}
	}
	return nil
}

// vecsRecord wraps one colVec per schema field as a record.
func vecsRecord(s *Schema, vecs []*colVec) (arrow.Record, error) {
	cols := make([]arrow.Array, len(vecs))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	n := 0
	for i, v := range vecs {
		a, err := v.arrow()
		if err != nil {
			return nil, err
		}
		cols[i] = a
		n = v.n
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		return nil, err
	}
	return array.NewRecordBatch(sch, cols, int64(n)), nil
}
