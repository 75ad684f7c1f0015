package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// AppendKeyDatums appends the order-preserving encoding (see KeyBatch) of a
// key given as datums.
func AppendKeyDatums(dst []byte, types []DataType, ds []Datum) []byte {
	for i, t := range types {
		dst = appendKeyDatum(dst, t, ds[i])
	}
	return dst
}

func appendKeyDatum(dst []byte, t DataType, d Datum) []byte {
	if t.Nullable {
		if d.Null {
			return append(dst, 0)
		}
		dst = append(dst, 1)
	}
	var b [16]byte
	switch t.Root {
	case TypeBoolean, TypeTinyInt:
		return append(dst, byte(d.Int)^0x80)
	case TypeSmallInt:
		binary.BigEndian.PutUint16(b[:], uint16(d.Int)^1<<15)
		return append(dst, b[:2]...)
	case TypeInt, TypeDate:
		binary.BigEndian.PutUint32(b[:], uint32(d.Int)^1<<31)
		return append(dst, b[:4]...)
	case TypeBigInt:
		binary.BigEndian.PutUint64(b[:], uint64(d.Int)^1<<63)
		return append(dst, b[:8]...)
	case TypeTimestamp:
		binary.BigEndian.PutUint64(b[:], uint64(timestampInUnit(t.Precision, d.Int, d.Nanos))^1<<63)
		return append(dst, b[:8]...)
	case TypeFloat:
		binary.BigEndian.PutUint32(b[:], orderedFloat32(float32(d.Float)))
		return append(dst, b[:4]...)
	case TypeDouble:
		binary.BigEndian.PutUint64(b[:], orderedFloat64(d.Float))
		return append(dst, b[:8]...)
	case TypeDecimal:
		hi, lo := decimalWords(t, d)
		binary.BigEndian.PutUint64(b[:], uint64(hi)^1<<63)
		binary.BigEndian.PutUint64(b[8:], lo)
		return append(dst, b[:16]...)
	case TypeString, TypeBytes:
		for _, c := range d.Bytes {
			dst = append(dst, c)
			if c == 0 {
				dst = append(dst, 0xFF)
			}
		}
		return append(dst, 0, 1)
	}
	panic(fmt.Sprintf("key encoding: unsupported type %s", t))
}

// timestampInUnit converts millis + nano-of-milli to the Arrow unit of the
// precision.
func timestampInUnit(precision int, millis int64, nanos int32) int64 {
	switch {
	case precision <= 3:
		return millis
	case precision <= 6:
		return millis*1000 + int64(nanos)/1000
	}
	return millis*1_000_000 + int64(nanos)
}

// decimalWords is the unscaled value of a decimal datum as a 128-bit two's
// complement (high, low).
func decimalWords(t DataType, d Datum) (int64, uint64) {
	if compactDecimal(t.Precision) {
		return d.Int >> 63, uint64(d.Int)
	}
	var b [16]byte
	if len(d.Bytes) > 0 && d.Bytes[0]&0x80 != 0 {
		for i := range b {
			b[i] = 0xFF
		}
	}
	copy(b[16-len(d.Bytes):], d.Bytes)
	return int64(binary.BigEndian.Uint64(b[:])), binary.BigEndian.Uint64(b[8:])
}

// CompareKeyDatums compares two keys in Paimon's order.
func CompareKeyDatums(types []DataType, a, b []Datum) int {
	return bytes.Compare(AppendKeyDatums(nil, types, a), AppendKeyDatums(nil, types, b))
}

// CompareDatum compares two values of type t in Paimon's order (nulls first).
func CompareDatum(t DataType, a, b Datum) int {
	t.Nullable = true
	return bytes.Compare(appendKeyDatum(nil, t, a), appendKeyDatum(nil, t, b))
}

// NewKeyComparator orders serialized BinaryRows of the given key types (for
// example DataFileMeta.MinKey/MaxKey) in Paimon's order. A row that does not
// decode sorts before every row that does, so corrupt metadata cannot panic a
// comparison; decoders report it where the row is read.
func NewKeyComparator(keyTypes []DataType) KeyComparator {
	enc := func(row []byte) ([]byte, bool) {
		ds, err := DecodeBinaryRow(row, keyTypes)
		if err != nil {
			return nil, false
		}
		return AppendKeyDatums(nil, keyTypes, ds), true
	}
	return func(a, b []byte) int {
		ea, oka := enc(a)
		eb, okb := enc(b)
		if !oka || !okb {
			return boolCompare(oka, okb)
		}
		return bytes.Compare(ea, eb)
	}
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
