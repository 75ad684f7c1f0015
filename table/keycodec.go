package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Keys are compared in Paimon's order (field by field, nulls first, strings
// and bytes as unsigned bytes) by encoding them to byte strings whose
// bytes.Compare order is that order. The encoding of one field:
//
//	nullable fields      a marker byte, 0x00 null (then nothing), 0x01 present
//	integers, dates      big-endian with the sign bit flipped (1, 2, 4 or 8 bytes)
//	timestamps           the Arrow value (unit by precision) as a flipped int64
//	decimals             the unscaled value as 16 flipped big-endian bytes
//	floats, doubles      IEEE bits, all flipped when negative, else the sign flipped
//	strings, bytes       0x00 escaped as 0x00 0xFF, terminated by 0x00 0x01
//
// Encoded keys are also exact hash-set keys: equal keys encode equally.

// KeyBatch holds the encoded keys of a batch of rows, packed in one buffer.
type KeyBatch struct {
	buf  []byte
	offs []int32 // len n+1
	pos  []int32 // write cursors, scratch
}

// Len is the number of keys.
func (kb *KeyBatch) Len() int { return len(kb.offs) - 1 }

// Key returns the encoded key of row i; it aliases the batch.
func (kb *KeyBatch) Key(i int) []byte { return kb.buf[kb.offs[i]:kb.offs[i+1]] }

// Compare compares keys i and j.
func (kb *KeyBatch) Compare(i, j int) int { return bytes.Compare(kb.Key(i), kb.Key(j)) }

// EncodeArrow encodes the key of rows [0,n) from the given columns (one per
// key field, Arrow types per ArrowType). The batch is reused.
func (kb *KeyBatch) EncodeArrow(cols []arrow.Array, types []DataType) error {
	n := 0
	if len(cols) > 0 {
		n = cols[0].Len()
	}
	kb.offs = grow32(kb.offs, n+1)
	clear(kb.offs)
	for c, col := range cols {
		if col.Len() != n {
			return fmt.Errorf("key column %d has %d rows, column 0 has %d", c, col.Len(), n)
		}
		if err := addWidths(kb.offs[1:], col, types[c]); err != nil {
			return err
		}
	}
	for i := 1; i <= n; i++ {
		kb.offs[i] += kb.offs[i-1]
	}
	total := int(kb.offs[n])
	if cap(kb.buf) < total {
		kb.buf = make([]byte, total, total+total/4)
	}
	kb.buf = kb.buf[:total]
	kb.pos = grow32(kb.pos, n)
	copy(kb.pos, kb.offs[:n])
	for c, col := range cols {
		putColumn(kb.buf, kb.pos, col, types[c])
	}
	return nil
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// fixedKeyWidth is the encoded width of a non-null value of t, or -1 for
// strings and bytes.
func fixedKeyWidth(t DataType) int {
	switch t.Root {
	case TypeBoolean, TypeTinyInt:
		return 1
	case TypeSmallInt:
		return 2
	case TypeInt, TypeDate, TypeFloat:
		return 4
	case TypeBigInt, TypeDouble, TypeTimestamp:
		return 8
	case TypeDecimal:
		return 16
	}
	return -1
}

func addWidths(w []int32, col arrow.Array, t DataType) error {
	marker := int32(0)
	if t.Nullable {
		marker = 1
	}
	hasNulls := col.NullN() > 0
	if hasNulls && !t.Nullable {
		return fmt.Errorf("key column of NOT NULL type %s holds nulls", t)
	}
	if fw := fixedKeyWidth(t); fw > 0 {
		for i := range w {
			if hasNulls && col.IsNull(i) {
				w[i] += marker
			} else {
				w[i] += marker + int32(fw)
			}
		}
		return nil
	}
	switch a := col.(type) {
	case *array.String:
		for i := range w {
			if hasNulls && a.IsNull(i) {
				w[i] += marker
				continue
			}
			v := a.ValueStr(i)
			w[i] += marker + int32(len(v)+2+countZeros(v))
		}
	case *array.Binary:
		for i := range w {
			if hasNulls && a.IsNull(i) {
				w[i] += marker
				continue
			}
			v := a.Value(i)
			w[i] += marker + int32(len(v)+2+bytes.Count(v, []byte{0}))
		}
	default:
		return fmt.Errorf("key column: arrow type %s for %s", col.DataType(), t)
	}
	return nil
}

func countZeros(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			n++
		}
	}
	return n
}

// putColumn writes one column's encoded fields at the rows' cursors.
func putColumn(buf []byte, pos []int32, col arrow.Array, t DataType) {
	nullable := t.Nullable
	hasNulls := col.NullN() > 0
	for i := range pos {
		if nullable {
			if hasNulls && col.IsNull(i) {
				buf[pos[i]] = 0
				pos[i]++
				continue
			}
			buf[pos[i]] = 1
			pos[i]++
		}
		pos[i] += int32(putArrowValue(buf[pos[i]:], col, i))
	}
}

func putArrowValue(dst []byte, col arrow.Array, i int) int {
	switch a := col.(type) {
	case *array.Int32:
		binary.BigEndian.PutUint32(dst, uint32(a.Value(i))^1<<31)
		return 4
	case *array.Int64:
		binary.BigEndian.PutUint64(dst, uint64(a.Value(i))^1<<63)
		return 8
	case *array.String:
		return putEscaped(dst, a.ValueStr(i))
	case *array.Binary:
		return putEscaped(dst, string(a.Value(i)))
	case *array.Int8:
		dst[0] = byte(a.Value(i)) ^ 0x80
		return 1
	case *array.Int16:
		binary.BigEndian.PutUint16(dst, uint16(a.Value(i))^1<<15)
		return 2
	case *array.Boolean:
		dst[0] = 0x80
		if a.Value(i) {
			dst[0] = 0x81
		}
		return 1
	case *array.Date32:
		binary.BigEndian.PutUint32(dst, uint32(a.Value(i))^1<<31)
		return 4
	case *array.Timestamp:
		binary.BigEndian.PutUint64(dst, uint64(a.Value(i))^1<<63)
		return 8
	case *array.Float32:
		binary.BigEndian.PutUint32(dst, orderedFloat32(a.Value(i)))
		return 4
	case *array.Float64:
		binary.BigEndian.PutUint64(dst, orderedFloat64(a.Value(i)))
		return 8
	case *array.Decimal128:
		v := a.Value(i)
		binary.BigEndian.PutUint64(dst, uint64(v.HighBits())^1<<63)
		binary.BigEndian.PutUint64(dst[8:], v.LowBits())
		return 16
	}
	panic(fmt.Sprintf("key encoding: unexpected arrow array %T", col))
}

func putEscaped(dst []byte, v string) int {
	n := 0
	for j := 0; j < len(v); j++ {
		dst[n] = v[j]
		n++
		if v[j] == 0 {
			dst[n] = 0xFF
			n++
		}
	}
	dst[n], dst[n+1] = 0, 1
	return n + 2
}

func orderedFloat32(f float32) uint32 {
	b := math.Float32bits(f)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

func orderedFloat64(f float64) uint64 {
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		return ^b
	}
	return b | 1<<63
}
