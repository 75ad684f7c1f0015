package subtask

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/table"
)

// paimonCodec converts between the store's encoded keys and datums and the
// Arrow records of a state table (columns typed per table.ArrowType).
type paimonCodec struct {
	l       *layout
	cols    []Column
	schema  *arrow.Schema // every column
	keys    *arrow.Schema // primary-key columns
	nPK     int
	valIdx  []int // result-record column of each non-key datum
	keyIdx  []int // result-record column of each primary-key column
	scratch Row
}

// paimonSchema is the table schema of a layout: kg leads the primary key and
// is the bucket key, so a key group is one bucket and a key-group range is a
// key range.
func paimonSchema(l *layout, buckets int, deletionVectors bool) table.Schema {
	cols := l.columns()
	s := table.Schema{
		Options: map[string]string{
			table.OptionBucket:          strconv.Itoa(buckets),
			table.OptionBucketKey:       ColumnKeyGroup,
			table.OptionFileFormat:      "parquet",
			table.OptionMergeEngine:     "deduplicate",
			table.OptionDeletionVectors: strconv.FormatBool(deletionVectors),
		},
	}
	for i, c := range cols {
		s.Fields = append(s.Fields, table.Field{ID: i, Name: c.Name, Type: c.Type})
		if i < len(l.pkTypes) {
			s.PrimaryKeys = append(s.PrimaryKeys, c.Name)
		}
	}
	s.HighestFieldID = len(cols) - 1
	return s
}

func newPaimonCodec(l *layout) (*paimonCodec, error) {
	c := &paimonCodec{l: l, cols: l.columns(), nPK: len(l.pkTypes), scratch: make(Row, len(l.pkTypes))}
	fields := make([]arrow.Field, len(c.cols))
	for i, col := range c.cols {
		at, err := table.ArrowType(col.Type)
		if err != nil {
			return nil, fmt.Errorf("state %q column %q: %w", l.Name, col.Name, err)
		}
		fields[i] = arrow.Field{Name: col.Name, Type: at, Nullable: col.Type.Nullable}
	}
	c.schema = arrow.NewSchema(fields, nil)
	c.keys = arrow.NewSchema(fields[:c.nPK], nil)
	return c, nil
}

// bind locates the columns of a result record by name.
func (c *paimonCodec) bind(s *arrow.Schema) error {
	c.keyIdx, c.valIdx = c.keyIdx[:0], c.valIdx[:0]
	for i, col := range c.cols {
		idx := s.FieldIndices(col.Name)
		if len(idx) != 1 {
			return fmt.Errorf("state %q: result has %d columns named %q", c.l.Name, len(idx), col.Name)
		}
		if i < c.nPK {
			c.keyIdx = append(c.keyIdx, idx[0])
		} else {
			c.valIdx = append(c.valIdx, idx[0])
		}
	}
	return nil
}

// keyRecord builds a record of the primary-key columns of encoded keys.
func (c *paimonCodec) keyRecord(keys []string) (arrow.Record, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.keys)
	defer b.Release()
	for _, k := range keys {
		if err := c.l.decodePK(c.scratch, k); err != nil {
			return nil, err
		}
		for j := 0; j < c.nPK; j++ {
			appendArrow(b.Field(j), c.scratch[j])
		}
	}
	return b.NewRecord(), nil
}

// writeRecord builds the full rows of a flush, with a tombstone's value
// columns NULL, and their value kinds.
func (c *paimonCodec) writeRecord(rows []mutation) (arrow.Record, []table.ValueKind, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer b.Release()
	kinds := make([]table.ValueKind, len(rows))
	for i, m := range rows {
		if err := c.l.decodePK(c.scratch, m.key); err != nil {
			return nil, nil, err
		}
		for j := 0; j < c.nPK; j++ {
			appendArrow(b.Field(j), c.scratch[j])
		}
		for j := c.nPK; j < len(c.cols); j++ {
			if m.delete {
				b.Field(j).AppendNull()
			} else {
				appendArrow(b.Field(j), m.vals[j-c.nPK])
			}
		}
		kinds[i] = table.KindInsert
		if m.delete {
			kinds[i] = table.KindDelete
		}
	}
	return b.NewRecord(), kinds, nil
}

// rowFilter decides, from its encoded key, what to do with a row.
type rowFilter func(key []byte) rowAction

type rowAction int8

const (
	rowKeep rowAction = iota
	rowSkip           // not wanted: its values are not decoded
	rowStop           // neither this row nor any after it
)

// rows calls fn with the position, encoded key and non-key datums of the rows
// of a result record that want keeps (nil keeps all), until fn returns false
// or want says stop. It reports whether it stopped.
func (c *paimonCodec) rows(rec arrow.Record, want rowFilter, fn func(i int, key string, vals Row) bool) (bool, error) {
	if err := c.bind(rec.Schema()); err != nil {
		return false, err
	}
	var enc []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		enc = enc[:0]
		for j, ci := range c.keyIdx {
			d, err := datumAt(rec.Column(ci), i)
			if err != nil {
				return false, fmt.Errorf("state %q column %q: %w", c.l.Name, c.cols[j].Name, err)
			}
			if d.IsNull() {
				return false, fmt.Errorf("state %q: NULL in key column %q", c.l.Name, c.cols[j].Name)
			}
			enc = appendKeyDatum(enc, c.cols[j].Type, d)
		}
		if want != nil {
			switch want(enc) {
			case rowSkip:
				continue
			case rowStop:
				return true, nil
			}
		}
		vals := make(Row, len(c.valIdx))
		for j, ci := range c.valIdx {
			d, err := datumAt(rec.Column(ci), i)
			if err != nil {
				return false, fmt.Errorf("state %q column %q: %w", c.l.Name, c.cols[c.nPK+j].Name, err)
			}
			vals[j] = d
		}
		if !fn(i, string(enc), vals) {
			return true, nil
		}
	}
	return false, nil
}

// appendArrow appends a datum to a builder of the column's Arrow type.
func appendArrow(b array.Builder, d Datum) {
	if d.IsNull() {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(d.Bool())
	case *array.Int8Builder:
		b.Append(int8(d.Int()))
	case *array.Int16Builder:
		b.Append(int16(d.Int()))
	case *array.Int32Builder:
		b.Append(int32(d.Int()))
	case *array.Int64Builder:
		b.Append(d.Int())
	case *array.Float32Builder:
		b.Append(float32(d.Float()))
	case *array.Float64Builder:
		b.Append(d.Float())
	case *array.StringBuilder:
		b.Append(d.Str())
	case *array.BinaryBuilder:
		b.AppendString(d.Str())
	case *array.Date32Builder:
		b.Append(arrow.Date32(d.Int()))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(d.Int()))
	case *array.Decimal128Builder:
		hi, lo := d.Decimal()
		b.Append(decimal128.New(hi, lo))
	default:
		panic(fmt.Sprintf("subtask: no arrow mapping for builder %T", b))
	}
}

// datumAt reads row i of a column as a Datum (strings are copied).
func datumAt(col arrow.Array, i int) (Datum, error) {
	if col.IsNull(i) {
		return Null, nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return Bool(a.Value(i)), nil
	case *array.Int8:
		return Int(int64(a.Value(i))), nil
	case *array.Int16:
		return Int(int64(a.Value(i))), nil
	case *array.Int32:
		return Int(int64(a.Value(i))), nil
	case *array.Int64:
		return Int(a.Value(i)), nil
	case *array.Float32:
		return Float(float64(a.Value(i))), nil
	case *array.Float64:
		return Float(a.Value(i)), nil
	case *array.String:
		return Str(string([]byte(a.Value(i)))), nil
	case *array.Binary:
		return Bytes(a.Value(i)), nil
	case *array.Date32:
		return Int(int64(a.Value(i))), nil
	case *array.Timestamp:
		return Int(int64(a.Value(i))), nil
	case *array.Decimal128:
		v := a.Value(i)
		return Decimal(v.HighBits(), v.LowBits()), nil
	}
	return Null, fmt.Errorf("arrow array %T has no datum mapping", col)
}

// prefixDatums decodes the leading n primary-key columns of an encoded key
// into the table package's datums (for scan bounds).
func (c *paimonCodec) prefixDatums(enc string, n int) ([]table.Datum, int, error) {
	row := make(Row, n)
	used, err := decodeKey(row, enc, c.l.pkTypes[:n])
	if err != nil {
		return nil, 0, fmt.Errorf("state %q: %w", c.l.Name, err)
	}
	out := make([]table.Datum, n)
	for i, d := range row {
		out[i] = tableDatum(c.l.pkTypes[i], d)
	}
	return out, used, nil
}

// tableDatum converts a datum to the table package's representation (for
// scan bounds).
func tableDatum(t table.DataType, d Datum) table.Datum {
	if d.IsNull() {
		return table.NullDatum
	}
	switch t.Root {
	case table.TypeFloat, table.TypeDouble:
		return table.FloatDatum(d.Float())
	case table.TypeString, table.TypeBytes:
		return table.BytesDatum([]byte(d.Str()))
	case table.TypeTimestamp:
		per := int64(1)
		switch {
		case t.Precision <= 3:
		case t.Precision <= 6:
			per = 1000
		default:
			per = 1_000_000
		}
		v := d.Int()
		ms, rem := v/per, v%per
		if rem < 0 {
			ms, rem = ms-1, rem+per
		}
		return table.Datum{Int: ms, Nanos: int32(rem * (1_000_000 / per))}
	case table.TypeDecimal:
		hi, lo := d.Decimal()
		if t.Precision <= 18 {
			return table.IntDatum(int64(lo))
		}
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], uint64(hi))
		binary.BigEndian.PutUint64(b[8:], lo)
		i := 0
		for i < 15 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xFF && b[i+1]&0x80 != 0) {
			i++
		}
		return table.BytesDatum(b[i:])
	}
	return table.IntDatum(d.Int())
}
