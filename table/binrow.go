package table

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Datum is one field value in Paimon's internal representation, the unit
// BinaryRows, stats and keys are built from. Which member is meaningful
// depends on the field's DataType:
//
//	BOOLEAN, TINYINT..BIGINT, DATE   Int
//	DECIMAL(p<=18)                   Int (the unscaled value)
//	DECIMAL(p>18)                    Bytes (unscaled, big-endian two's complement, minimal)
//	TIMESTAMP(p)                     Int (epoch millis) and Nanos (nano of millisecond)
//	FLOAT, DOUBLE                    Float
//	STRING, BYTES                    Bytes
type Datum struct {
	Null  bool
	Int   int64
	Nanos int32
	Float float64
	Bytes []byte
}

// NullDatum is the null value of any type.
var NullDatum = Datum{Null: true}

// IntDatum, FloatDatum and BytesDatum build non-null datums.
func IntDatum(v int64) Datum     { return Datum{Int: v} }
func FloatDatum(v float64) Datum { return Datum{Float: v} }
func BytesDatum(v []byte) Datum  { return Datum{Bytes: v} }

// binRowMaxInline is the longest string or binary stored inside its 8-byte slot.
const binRowMaxInline = 7

func compactDecimal(precision int) bool   { return precision <= 18 }
func compactTimestamp(precision int) bool { return precision <= 3 }

// binRowNullBytes is the size of the header and null-bit region of a row of
// the given arity: one header byte (the row kind) plus one bit per field,
// rounded up to whole 8-byte words.
func binRowNullBytes(arity int) int { return ((arity + 63 + 8) / 64) * 8 }

// BinaryRowWriter builds serialized BinaryRows (4-byte big-endian arity, then
// the little-endian row). Reuse one writer to build many rows without
// allocating: Reset, set every field, then Bytes.
type BinaryRowWriter struct {
	arity     int
	nullBytes int
	buf       []byte // arity prefix + row
}

// NewBinaryRowWriter returns a writer for rows of the given arity.
func NewBinaryRowWriter(arity int) *BinaryRowWriter {
	w := &BinaryRowWriter{arity: arity, nullBytes: binRowNullBytes(arity)}
	w.Reset()
	return w
}

// Reset starts a new row with every field zero and not null.
func (w *BinaryRowWriter) Reset() {
	fixed := 4 + w.nullBytes + 8*w.arity
	if cap(w.buf) < fixed {
		w.buf = make([]byte, fixed, fixed+32)
	}
	w.buf = w.buf[:fixed]
	clear(w.buf)
	binary.BigEndian.PutUint32(w.buf, uint32(w.arity))
}

// Bytes returns the serialized row. It aliases the writer's buffer until the
// next Reset.
func (w *BinaryRowWriter) Bytes() []byte { return w.buf }

// RowBytes returns the row without its arity prefix: the bytes Paimon hashes.
func (w *BinaryRowWriter) RowBytes() []byte { return w.buf[4:] }

func (w *BinaryRowWriter) slot(i int) int { return 4 + w.nullBytes + 8*i }

// SetNull marks field i null and zeroes its slot.
func (w *BinaryRowWriter) SetNull(i int) {
	bit := i + 8
	w.buf[4+bit>>3] |= 1 << (bit & 7)
	binary.LittleEndian.PutUint64(w.buf[w.slot(i):], 0)
}

// SetInt stores a boolean, integer, date or compact decimal in the width of t.
func (w *BinaryRowWriter) SetInt(i int, t DataType, v int64) {
	s := w.buf[w.slot(i):]
	switch t.Root {
	case TypeBoolean, TypeTinyInt:
		s[0] = byte(v)
	case TypeSmallInt:
		binary.LittleEndian.PutUint16(s, uint16(v))
	case TypeInt, TypeDate:
		binary.LittleEndian.PutUint32(s, uint32(v))
	default:
		binary.LittleEndian.PutUint64(s, uint64(v))
	}
}

// SetFloat stores a FLOAT or DOUBLE.
func (w *BinaryRowWriter) SetFloat(i int, t DataType, v float64) {
	s := w.buf[w.slot(i):]
	if t.Root == TypeFloat {
		binary.LittleEndian.PutUint32(s, math.Float32bits(float32(v)))
		return
	}
	binary.LittleEndian.PutUint64(s, math.Float64bits(v))
}

// SetBytes stores a STRING or BYTES value: inline when it fits in 7 bytes,
// otherwise in the variable part, padded to a whole word.
func (w *BinaryRowWriter) SetBytes(i int, v []byte) {
	at := w.slot(i)
	if len(v) <= binRowMaxInline {
		s := w.buf[at : at+8]
		clear(s)
		copy(s, v)
		s[7] = 0x80 | byte(len(v))
		return
	}
	w.setVar(at, v, len(v), roundWord(len(v)))
}

// setVar appends reserve bytes (data then zero padding) to the variable part
// and points slot at to it with the given size word.
func (w *BinaryRowWriter) setVar(at int, data []byte, size, reserve int) {
	off := len(w.buf) - 4
	w.buf = append(w.buf, make([]byte, reserve)...)
	copy(w.buf[4+off:], data)
	binary.LittleEndian.PutUint64(w.buf[at:], uint64(off)<<32|uint64(uint32(size)))
}

// SetTimestamp stores epoch millis plus nano-of-millisecond; precision <= 3
// keeps only the millis in the slot.
func (w *BinaryRowWriter) SetTimestamp(i int, precision int, millis int64, nanos int32) {
	at := w.slot(i)
	if compactTimestamp(precision) {
		binary.LittleEndian.PutUint64(w.buf[at:], uint64(millis))
		return
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(millis))
	w.setVar(at, b[:], int(nanos), 8)
}

// SetWideDecimal stores a DECIMAL with precision > 18 from its unscaled
// big-endian two's complement bytes (at most 16).
func (w *BinaryRowWriter) SetWideDecimal(i int, unscaled []byte) {
	w.setVar(w.slot(i), unscaled, len(unscaled), 16)
}

// setNullReserved marks a variable-part field (wide decimal, precise timestamp)
// null the way Java does: the reserved bytes stay and the slot keeps their offset.
func (w *BinaryRowWriter) setNullReserved(i int, reserve int) {
	w.setVar(w.slot(i), nil, 0, reserve)
	bit := i + 8
	w.buf[4+bit>>3] |= 1 << (bit & 7)
}

// Set stores d in field i according to t.
func (w *BinaryRowWriter) Set(i int, t DataType, d Datum) {
	if d.Null {
		switch {
		case t.Root == TypeDecimal && !compactDecimal(t.Precision):
			w.setNullReserved(i, 16)
		case t.Root == TypeTimestamp && !compactTimestamp(t.Precision):
			w.setNullReserved(i, 8)
		default:
			w.SetNull(i)
		}
		return
	}
	switch t.Root {
	case TypeFloat, TypeDouble:
		w.SetFloat(i, t, d.Float)
	case TypeString, TypeBytes:
		w.SetBytes(i, d.Bytes)
	case TypeDecimal:
		if compactDecimal(t.Precision) {
			w.SetInt(i, t, d.Int)
		} else {
			w.SetWideDecimal(i, d.Bytes)
		}
	case TypeTimestamp:
		w.SetTimestamp(i, t.Precision, d.Int, d.Nanos)
	default:
		w.SetInt(i, t, d.Int)
	}
}

func roundWord(n int) int { return (n + 7) &^ 7 }

// EncodeBinaryRow serializes datums of the given types as a BinaryRow with its
// 4-byte arity prefix.
func EncodeBinaryRow(types []DataType, vals []Datum) []byte {
	w := NewBinaryRowWriter(len(types))
	for i, t := range types {
		w.Set(i, t, vals[i])
	}
	return append([]byte(nil), w.Bytes()...)
}

// EmptyBinaryRow is the serialized zero-arity row of a non-partitioned table.
func EmptyBinaryRow() []byte { return make([]byte, 12) }

// BinaryRow is a read-only view of a serialized BinaryRow.
type BinaryRow struct {
	arity int
	row   []byte // without the arity prefix
}

// ParseBinaryRow checks the framing of a serialized BinaryRow.
func ParseBinaryRow(b []byte) (BinaryRow, error) {
	if len(b) < 4 {
		return BinaryRow{}, fmt.Errorf("binary row: %d bytes, shorter than the arity prefix", len(b))
	}
	arity := int(int32(binary.BigEndian.Uint32(b)))
	if arity < 0 || arity > 1<<16 {
		return BinaryRow{}, fmt.Errorf("binary row: arity %d out of range", arity)
	}
	fixed := binRowNullBytes(arity) + 8*arity
	if len(b)-4 < fixed {
		return BinaryRow{}, fmt.Errorf("binary row: arity %d needs %d fixed bytes, have %d", arity, fixed, len(b)-4)
	}
	return BinaryRow{arity: arity, row: b[4:]}, nil
}

// Arity is the number of fields.
func (r BinaryRow) Arity() int { return r.arity }

// IsNull reports whether field i is null.
func (r BinaryRow) IsNull(i int) bool {
	bit := i + 8
	return r.row[bit>>3]&(1<<(bit&7)) != 0
}

func (r BinaryRow) slot(i int) []byte {
	at := binRowNullBytes(r.arity) + 8*i
	return r.row[at : at+8]
}

// varPart returns the bytes an (offset<<32 | size) slot word points to.
func (r BinaryRow) varPart(i, size int) ([]byte, error) {
	w := binary.LittleEndian.Uint64(r.slot(i))
	off := int(w >> 32)
	if off < 0 || size < 0 || off+size > len(r.row) {
		return nil, fmt.Errorf("binary row: field %d points to [%d,%d) beyond %d bytes", i, off, off+size, len(r.row))
	}
	return r.row[off : off+size], nil
}

// Datum decodes field i as type t. Bytes alias the row.
func (r BinaryRow) Datum(i int, t DataType) (Datum, error) {
	if i < 0 || i >= r.arity {
		return Datum{}, fmt.Errorf("binary row: field %d of arity %d", i, r.arity)
	}
	if r.IsNull(i) {
		return NullDatum, nil
	}
	s := r.slot(i)
	switch t.Root {
	case TypeBoolean, TypeTinyInt:
		return IntDatum(int64(int8(s[0]))), nil
	case TypeSmallInt:
		return IntDatum(int64(int16(binary.LittleEndian.Uint16(s)))), nil
	case TypeInt, TypeDate:
		return IntDatum(int64(int32(binary.LittleEndian.Uint32(s)))), nil
	case TypeBigInt:
		return IntDatum(int64(binary.LittleEndian.Uint64(s))), nil
	case TypeFloat:
		return FloatDatum(float64(math.Float32frombits(binary.LittleEndian.Uint32(s)))), nil
	case TypeDouble:
		return FloatDatum(math.Float64frombits(binary.LittleEndian.Uint64(s))), nil
	case TypeString, TypeBytes:
		if s[7]&0x80 != 0 {
			n := int(s[7] & 0x7f)
			if n > binRowMaxInline {
				return Datum{}, fmt.Errorf("binary row: field %d inline length %d", i, n)
			}
			return BytesDatum(s[:n]), nil
		}
		b, err := r.varPart(i, int(uint32(binary.LittleEndian.Uint64(s))))
		return BytesDatum(b), err
	case TypeDecimal:
		if compactDecimal(t.Precision) {
			return IntDatum(int64(binary.LittleEndian.Uint64(s))), nil
		}
		n := int(uint32(binary.LittleEndian.Uint64(s)))
		if n > 16 {
			return Datum{}, fmt.Errorf("binary row: field %d decimal of %d bytes", i, n)
		}
		b, err := r.varPart(i, n)
		return BytesDatum(b), err
	case TypeTimestamp:
		if compactTimestamp(t.Precision) {
			return IntDatum(int64(binary.LittleEndian.Uint64(s))), nil
		}
		b, err := r.varPart(i, 8)
		if err != nil {
			return Datum{}, err
		}
		nanos := int32(uint32(binary.LittleEndian.Uint64(s)))
		return Datum{Int: int64(binary.LittleEndian.Uint64(b)), Nanos: nanos}, nil
	}
	return Datum{}, fmt.Errorf("binary row: field %d has unsupported type %s", i, t)
}

// DecodeBinaryRow decodes every field of a serialized BinaryRow whose arity
// must equal len(types).
func DecodeBinaryRow(b []byte, types []DataType) ([]Datum, error) {
	r, err := ParseBinaryRow(b)
	if err != nil {
		return nil, err
	}
	if r.arity != len(types) {
		return nil, fmt.Errorf("binary row: arity %d, expected %d", r.arity, len(types))
	}
	out := make([]Datum, len(types))
	for i, t := range types {
		if out[i], err = r.Datum(i, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}
