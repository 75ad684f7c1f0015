package subtask

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowSpan is the rows [from, to) of one chunk of a gather.
type rowSpan struct {
	chunk    int
	from, to int
}

// gatherColumn appends the spans of a column (one array per chunk) to b, a
// builder of the column's type, copying fixed-width values in bulk.
func gatherColumn(b array.Builder, chunks []arrow.Array, spans []rowSpan) error {
	var scratch []bool
	for _, s := range spans {
		col := chunks[s.chunk]
		var valid []bool // nil: every row valid
		if col.NullN() > 0 {
			scratch = scratch[:0]
			for i := s.from; i < s.to; i++ {
				scratch = append(scratch, col.IsValid(i))
			}
			valid = scratch
		}
		switch a := col.(type) {
		case *array.Boolean:
			for i := s.from; i < s.to; i++ {
				if a.IsNull(i) {
					b.AppendNull()
				} else {
					b.(*array.BooleanBuilder).Append(a.Value(i))
				}
			}
		case *array.Int8:
			b.(*array.Int8Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Int16:
			b.(*array.Int16Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Int32:
			b.(*array.Int32Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Int64:
			b.(*array.Int64Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Float32:
			b.(*array.Float32Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Float64:
			b.(*array.Float64Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Date32:
			b.(*array.Date32Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Timestamp:
			b.(*array.TimestampBuilder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.Decimal128:
			b.(*array.Decimal128Builder).AppendValues(a.Values()[s.from:s.to], valid)
		case *array.String:
			sb := b.(*array.StringBuilder)
			for i := s.from; i < s.to; i++ {
				if a.IsNull(i) {
					sb.AppendNull()
				} else {
					sb.Append(a.Value(i))
				}
			}
		case *array.Binary:
			bb := b.(*array.BinaryBuilder)
			for i := s.from; i < s.to; i++ {
				if a.IsNull(i) {
					bb.AppendNull()
				} else {
					bb.Append(a.Value(i))
				}
			}
		default:
			return fmt.Errorf("arrow array %T has no gather", col)
		}
	}
	return nil
}
