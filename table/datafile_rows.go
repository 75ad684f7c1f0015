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
	if lo < 0 || hi > d.numRows || lo > hi {
		return nil, fmt.Errorf("data file %s: rows [%d,%d) of %d", d.path, lo, hi, d.numRows)
	}
	seqs, kinds, err := d.readSeqKinds(func(c int, v *colVec) error { return d.readRange(c, lo, hi, v) })
	if err != nil {
		return nil, err
	}
	vecs, err := d.readFieldVecs(int(hi-lo), func(c int, v *colVec) error { return d.readRange(c, lo, hi, v) })
	if err != nil {
		return nil, err
	}
	rec, err := vecsRecord(d.schema, vecs)
	if err != nil {
		return nil, err
	}
	return &FileRows{Rows: rec, Seqs: seqs, Kinds: kinds, First: lo}, nil
}

// ReadAll decodes every row of the file.
func (d *DataFile) ReadAll() (*FileRows, error) { return d.ReadRange(0, d.numRows) }

func (d *DataFile) readSeqKinds(read func(c int, v *colVec) error) ([]int64, []ValueKind, error) {
	seq := newColVec(BigInt().NotNull())
	if err := read(d.seqCol, seq); err != nil {
		return nil, nil, err
	}
	kind := newColVec(TinyInt().NotNull())
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

// readFieldVecs decodes every schema field with read; n is the row count.
func (d *DataFile) readFieldVecs(n int, read func(c int, v *colVec) error) ([]*colVec, error) {
	vecs := make([]*colVec, len(d.schema.Fields))
	for i, f := range d.schema.Fields {
		v := newColVec(f.Type)
		if c := d.fieldCols[i]; c >= 0 {
			if err := read(c, v); err != nil {
				return nil, err
			}
		} else {
			if !f.Type.Nullable {
				return nil, corruptError(d.path, fmt.Errorf("lacks NOT NULL field %q", f.Name))
			}
			for j := 0; j < n; j++ {
				v.appendNull()
			}
		}
		if v.n != n {
			return nil, corruptError(d.path, fmt.Errorf("field %q decoded %d rows, want %d", f.Name, v.n, n))
		}
		vecs[i] = v
	}
	return vecs, nil
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
