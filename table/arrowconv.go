package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// ArrowType is the Arrow type a Paimon type is read and written as across the
// project: integers of their width, DATE as date32, DECIMAL as decimal128,
// TIMESTAMP(p) as a zone-less timestamp of the unit that holds p digits.
func ArrowType(t DataType) (arrow.DataType, error) {
	switch t.Root {
	case TypeBoolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case TypeTinyInt:
		return arrow.PrimitiveTypes.Int8, nil
	case TypeSmallInt:
		return arrow.PrimitiveTypes.Int16, nil
	case TypeInt:
		return arrow.PrimitiveTypes.Int32, nil
	case TypeBigInt:
		return arrow.PrimitiveTypes.Int64, nil
	case TypeFloat:
		return arrow.PrimitiveTypes.Float32, nil
	case TypeDouble:
		return arrow.PrimitiveTypes.Float64, nil
	case TypeString:
		return arrow.BinaryTypes.String, nil
	case TypeBytes:
		return arrow.BinaryTypes.Binary, nil
	case TypeDecimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case TypeDate:
		return arrow.FixedWidthTypes.Date32, nil
	case TypeTimestamp:
		return &arrow.TimestampType{Unit: timestampUnit(t.Precision)}, nil
	}
	return nil, fmt.Errorf("type %s has no arrow mapping", t)
}

func timestampUnit(precision int) arrow.TimeUnit {
	switch {
	case precision <= 3:
		return arrow.Millisecond
	case precision <= 6:
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// ArrowSchema maps the schema's fields in order, with nullability and the
// Paimon field id as metadata "PARQUET:field_id".
func (s *Schema) ArrowSchema() (*arrow.Schema, error) {
	return arrowSchemaOf(s.Fields)
}

func arrowSchemaOf(fields []Field) (*arrow.Schema, error) {
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		at, err := ArrowType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		out[i] = arrow.Field{
			Name:     f.Name,
			Type:     at,
			Nullable: f.Type.Nullable,
			Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(f.ID)}),
		}
	}
	return arrow.NewSchema(out, nil), nil
}

// checkArrowColumn verifies that a record column has the arrow type of t.
func checkArrowColumn(f Field, got arrow.DataType) error {
	want, err := ArrowType(f.Type)
	if err != nil {
		return err
	}
	if !arrow.TypeEqual(want, got) {
		return fmt.Errorf("column %q: arrow type %s, want %s", f.Name, got, want)
	}
	return nil
}
