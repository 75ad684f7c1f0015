package table

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// DatumOf reads row i of an Arrow column whose type is ArrowType(t), as the
// reads return them, as a Datum. Bytes alias the array.
func DatumOf(col arrow.Array, i int, t DataType) (Datum, error) {
	if col.IsNull(i) {
		return NullDatum, nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return IntDatum(1), nil
		}
		return IntDatum(0), nil
	case *array.Int8:
		return IntDatum(int64(a.Value(i))), nil
	case *array.Int16:
		return IntDatum(int64(a.Value(i))), nil
	case *array.Int32:
		return IntDatum(int64(a.Value(i))), nil
	case *array.Int64:
		return IntDatum(a.Value(i)), nil
	case *array.Date32:
		return IntDatum(int64(a.Value(i))), nil
	case *array.Float32:
		return FloatDatum(float64(a.Value(i))), nil
	case *array.Float64:
		return FloatDatum(a.Value(i)), nil
	case *array.String:
		return BytesDatum([]byte(a.Value(i))), nil
	case *array.Binary:
		return BytesDatum(a.Value(i)), nil
	case *array.Timestamp:
		ms, ns := splitTimestamp(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit)
		return Datum{Int: ms, Nanos: ns}, nil
	case *array.Decimal128:
		v := a.Value(i)
		if compactDecimal(t.Precision) {
			return IntDatum(int64(v.LowBits())), nil
		}
		return BytesDatum(minimalTwosComplement(v.HighBits(), v.LowBits())), nil
	}
	return Datum{}, fmt.Errorf("arrow array %T has no datum mapping for %s", col, t)
}

// splitTimestamp turns an Arrow timestamp into epoch millis and nano of milli.
func splitTimestamp(v int64, unit arrow.TimeUnit) (int64, int32) {
	per := int64(1)
	switch unit {
	case arrow.Second:
		return v * 1000, 0
	case arrow.Microsecond:
		per = 1000
	case arrow.Nanosecond:
		per = 1_000_000
	}
	ms, rem := v/per, v%per
	if rem < 0 {
		ms, rem = ms-1, rem+per
	}
	return ms, int32(rem * (1_000_000 / per))
}

// minimalTwosComplement is Java's BigInteger.toByteArray of a 128-bit value.
func minimalTwosComplement(hi int64, lo uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], uint64(hi))
	binary.BigEndian.PutUint64(b[8:], lo)
	i := 0
	for i < 15 {
		if b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xFF && b[i+1]&0x80 != 0 {
			i++
			continue
		}
		break
	}
	return append([]byte(nil), b[i:]...)
}
