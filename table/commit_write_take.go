package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// takeRows returns a record of the given rows of rec, in idx order. A run
// of consecutive ascending rows is a zero-copy slice; otherwise the columns
// are rebuilt. The caller releases the result.
func takeRows(rec arrow.Record, idx []int) (arrow.Record, error) {
	if contiguous(idx) {
		if len(idx) == 0 {
			return rec.NewSlice(0, 0), nil
		}
		return rec.NewSlice(int64(idx[0]), int64(idx[len(idx)-1]+1)), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		b := array.NewBuilder(memory.DefaultAllocator, rec.Column(c).DataType())
		b.Reserve(len(idx))
		err := appendRows(b, rec.Column(c), idx)
		if err == nil {
			cols[c] = b.NewArray()
		}
		b.Release()
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
	}
	return array.NewRecord(rec.Schema(), cols, int64(len(idx))), nil
}

func contiguous(idx []int) bool {
	for i := 1; i < len(idx); i++ {
		if idx[i] != idx[i-1]+1 {
			return false
		}
	}
	return true
}

type valueArray[T any] interface {
	IsNull(int) bool
	Value(int) T
}

type valueBuilder[T any] interface {
	AppendNull()
	Append(T)
}

func appendValues[T any](a valueArray[T], b valueBuilder[T], idx []int) {
	for _, i := range idx {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.Append(a.Value(i))
		}
	}
}

// appendRows appends rows idx of col to b (a builder of col's type) for the
// Arrow types ArrowType produces.
func appendRows(b array.Builder, col arrow.Array, idx []int) error {
	switch a := col.(type) {
	case *array.Boolean:
		appendValues[bool](a, b.(*array.BooleanBuilder), idx)
	case *array.Int8:
		appendValues[int8](a, b.(*array.Int8Builder), idx)
	case *array.Int16:
		appendValues[int16](a, b.(*array.Int16Builder), idx)
	case *array.Int32:
		appendValues[int32](a, b.(*array.Int32Builder), idx)
	case *array.Int64:
		appendValues[int64](a, b.(*array.Int64Builder), idx)
	case *array.Float32:
		appendValues[float32](a, b.(*array.Float32Builder), idx)
	case *array.Float64:
		appendValues[float64](a, b.(*array.Float64Builder), idx)
	case *array.String:
		appendValues[string](a, b.(*array.StringBuilder), idx)
	case *array.Binary:
		appendValues[[]byte](a, b.(*array.BinaryBuilder), idx)
	case *array.Date32:
		appendValues[arrow.Date32](a, b.(*array.Date32Builder), idx)
	case *array.Timestamp:
		appendValues[arrow.Timestamp](a, b.(*array.TimestampBuilder), idx)
	case *array.Decimal128:
		appendValues[decimal128.Num](a, b.(*array.Decimal128Builder), idx)
	default:
		return fmt.Errorf("arrow type %s is not supported", col.DataType())
	}
	return nil
}
