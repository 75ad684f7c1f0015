package table

import (
	"fmt"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// System columns of a primary-key data file.
const (
	keyColumnPrefix     = "_KEY_"
	seqColumnName       = "_SEQUENCE_NUMBER"
	kindColumnName      = "_VALUE_KIND"
	keyFieldIDOffset    = 1<<30 - 1 // Integer.MAX_VALUE / 2
	seqFieldID          = 1<<31 - 2
	kindFieldID         = 1<<31 - 3
	parquetMessageName  = "paimon_schema"
	maxDecimalPrecision = 38
)

// dataFileLayout is the column layout of a schema's data files: the trimmed
// key columns, _SEQUENCE_NUMBER, _VALUE_KIND, then every schema field. Leaf
// column i of the parquet schema is column i of this order.
type dataFileLayout struct {
	schema   *Schema
	keyIdx   []int // schema field index of each trimmed primary key
	keyTypes []DataType
	parquet  *parquet.Schema
	fields   []orderedField // the leaves of parquet
}

func (l *dataFileLayout) seqCol() int        { return len(l.keyIdx) }
func (l *dataFileLayout) kindCol() int       { return len(l.keyIdx) + 1 }
func (l *dataFileLayout) fieldCol(i int) int { return len(l.keyIdx) + 2 + i }

func newDataFileLayout(s *Schema) (*dataFileLayout, error) {
	l := &dataFileLayout{schema: s}
	var fields []orderedField
	for _, name := range s.TrimmedPrimaryKeys() {
		i := s.FieldIndex(name)
		if i < 0 {
			return nil, fmt.Errorf("schema %d: primary key %q is not a field", s.ID, name)
		}
		f := s.Fields[i]
		node, err := parquetNode(f.Type, f.ID+keyFieldIDOffset)
		if err != nil {
			return nil, fmt.Errorf("schema %d: key %q: %w", s.ID, name, err)
		}
		l.keyIdx = append(l.keyIdx, i)
		l.keyTypes = append(l.keyTypes, f.Type)
		fields = append(fields, orderedField{Node: node, name: keyColumnPrefix + name})
	}
	if len(l.keyIdx) == 0 {
		return nil, fmt.Errorf("schema %d: no trimmed primary key; only primary-key tables have key-sorted data files", s.ID)
	}
	fields = append(fields,
		orderedField{Node: parquet.FieldID(parquet.Required(plain(parquet.Leaf(parquet.Int64Type))), seqFieldID), name: seqColumnName},
		// nearly every row is +I: a dictionary page and one run per page
		orderedField{Node: parquet.FieldID(parquet.Required(parquet.Encoded(parquet.Int(8), &parquet.RLEDictionary)), kindFieldID), name: kindColumnName},
	)
	for _, f := range s.Fields {
		node, err := parquetNode(f.Type, f.ID)
		if err != nil {
			return nil, fmt.Errorf("schema %d: field %q: %w", s.ID, f.Name, err)
		}
		fields = append(fields, orderedField{Node: node, name: f.Name})
	}
	l.parquet, l.fields = parquet.NewSchema(parquetMessageName, orderedGroup(fields)), fields
	return l, nil
}

func plain(n parquet.Node) parquet.Node { return parquet.Encoded(n, &parquet.Plain) }

// parquetNode maps a Paimon type the way Paimon's ParquetSchemaConverter does.
func parquetNode(t DataType, id int) (parquet.Node, error) {
	var n parquet.Node
	switch t.Root {
	case TypeBoolean:
		n = parquet.Leaf(parquet.BooleanType)
	case TypeTinyInt:
		n = parquet.Int(8)
	case TypeSmallInt:
		n = parquet.Int(16)
	case TypeInt:
		n = parquet.Leaf(parquet.Int32Type)
	case TypeBigInt:
		n = parquet.Leaf(parquet.Int64Type)
	case TypeFloat:
		n = parquet.Leaf(parquet.FloatType)
	case TypeDouble:
		n = parquet.Leaf(parquet.DoubleType)
	case TypeString:
		n = parquet.String()
	case TypeBytes:
		n = parquet.Leaf(parquet.ByteArrayType)
	case TypeDate:
		n = parquet.Date()
	case TypeDecimal:
		if t.Precision < 1 || t.Precision > maxDecimalPrecision {
			return nil, fmt.Errorf("decimal precision %d", t.Precision)
		}
		switch {
		case t.Precision <= 9:
			n = parquet.Decimal(t.Scale, t.Precision, parquet.Int32Type)
		case t.Precision <= 18:
			n = parquet.Decimal(t.Scale, t.Precision, parquet.Int64Type)
		default:
			n = parquet.Decimal(t.Scale, t.Precision, parquet.FixedLenByteArrayType(decimalBytes(t.Precision)))
		}
	case TypeTimestamp:
		switch {
		case t.Precision <= 3:
			n = parquet.TimestampAdjusted(parquet.Millisecond, false)
		case t.Precision <= 6:
			n = parquet.TimestampAdjusted(parquet.Microsecond, false)
		default:
			n = parquet.Leaf(parquet.Int96Type)
		}
	default:
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	n = plain(boundsOnceNode{n})
	if t.Nullable {
		n = parquet.Optional(n)
	} else {
		n = parquet.Required(n)
	}
	return parquet.FieldID(n, id), nil
}

// decimalBytes is the fewest bytes whose two's complement holds every
// unscaled value of the precision.
func decimalBytes(precision int) int {
	n := 1
	for {
		// largest magnitude of n bytes: 2^(8n-1) - 1 >= 10^precision - 1
		if float64(8*n-1)*0.30102999566398120 >= float64(precision) {
			return n
		}
		n++
	}
}

// orderedGroup is a parquet group whose fields keep the given order
// (parquet.Group sorts by name).
type orderedGroup []orderedField

type orderedField struct {
	parquet.Node
	name string
}

func (f orderedField) Name() string                           { return f.name }
func (f orderedField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return parquetMessageName }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeOf(struct{}{}) }
func (g orderedGroup) Fields() []parquet.Field {
	out := make([]parquet.Field, len(g))
	for i := range g {
		out[i] = g[i]
	}
	return out
}
