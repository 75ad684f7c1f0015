package subtask

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/lakestate/lakestate/table"
)

// Key names one key of a state: its key group and its key columns (in the
// layout's Key order). The store reads Cols during a call and keeps no
// reference to it.
type Key struct {
	Group int32
	Cols  Row
}

// The order-preserving key encoding. Every primary-key column encodes to a
// self-delimiting byte string whose bytewise order is the column's order in a
// Paimon key comparison, so the concatenation orders like the tuple and a
// prefix of columns encodes to a prefix of bytes:
//
//	BOOLEAN                1 byte
//	TINYINT..BIGINT, DATE,
//	TIMESTAMP              big-endian at the type's width, sign bit flipped
//	FLOAT, DOUBLE          IEEE bits, all bits flipped when negative, else
//	                       the sign bit set; NaN canonical (orders last)
//	DECIMAL                16 bytes: high word sign-flipped, low word
//	STRING, BYTES          bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
const (
	escByte  = 0x00
	escEsc   = 0xFF
	escTerm  = 0x01
	signBit8 = uint64(1) << 63
)

// AppendKey appends the encoding of (k.Group, k.Cols), the key prefix of every
// row of k, to dst.
func (l *Layout) AppendKey(dst []byte, k Key) []byte {
	if len(k.Cols) != len(l.Key) {
		panic(fmt.Sprintf("subtask: state %q: key has %d columns, layout %d", l.Name, len(k.Cols), len(l.Key)))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(k.Group)^0x80000000) // as appendKeyDatum encodes an INT
	for i := range l.Key {
		dst = appendKeyColumn(dst, &l.Key[i].Type, &k.Cols[i])
	}
	return dst
}

// appendKeyColumn is appendKeyDatum with the integer columns that most
// keys are encoded in place: every read and write of a state encodes its
// key, and the general case passes the type and the datum by value through
// a switch of every type.
func appendKeyColumn(dst []byte, t *table.DataType, d *Datum) []byte {
	if d.hiSet != 0 {
		switch t.Root {
		case table.TypeBigInt, table.TypeTimestamp:
			return binary.BigEndian.AppendUint64(dst, d.num^signBit8)
		case table.TypeInt, table.TypeDate:
			return binary.BigEndian.AppendUint32(dst, uint32(d.num)^0x80000000)
		}
	}
	return appendKeyDatum(dst, *t, *d)
}

// appendSub appends the encoding of an entry key to a prefix.
func (l *layout) appendSub(dst []byte, sub Row) []byte {
	if len(sub) != len(l.sub) {
		panic(fmt.Sprintf("subtask: state %q: entry key has %d columns, layout %d", l.Name, len(sub), len(l.sub)))
	}
	for i := range l.sub {
		dst = appendKeyColumn(dst, &l.sub[i].Type, &sub[i])
	}
	return dst
}

func appendKeyDatum(dst []byte, t table.DataType, d Datum) []byte {
	if d.IsNull() {
		panic(fmt.Sprintf("subtask: NULL in a primary-key column of type %s", t))
	}
	switch t.Root {
	case table.TypeBoolean:
		return append(dst, byte(d.num&1))
	case table.TypeTinyInt:
		return append(dst, byte(d.num)^0x80)
	case table.TypeSmallInt:
		return binary.BigEndian.AppendUint16(dst, uint16(d.num)^0x8000)
	case table.TypeInt, table.TypeDate:
		return binary.BigEndian.AppendUint32(dst, uint32(d.num)^0x80000000)
	case table.TypeBigInt, table.TypeTimestamp:
		return binary.BigEndian.AppendUint64(dst, d.num^signBit8)
	case table.TypeFloat:
		f := float32(d.Float())
		if f != f {
			f = float32(math.NaN())
		}
		b := math.Float32bits(f)
		if b&0x80000000 != 0 {
			b = ^b
		} else {
			b |= 0x80000000
		}
		return binary.BigEndian.AppendUint32(dst, b)
	case table.TypeDouble:
		f := d.Float()
		if f != f {
			f = math.NaN()
		}
		b := math.Float64bits(f)
		if b&signBit8 != 0 {
			b = ^b
		} else {
			b |= signBit8
		}
		return binary.BigEndian.AppendUint64(dst, b)
	case table.TypeDecimal:
		dst = binary.BigEndian.AppendUint64(dst, d.hiSet) // the high word, sign bit flipped
		return binary.BigEndian.AppendUint64(dst, d.num)
	case table.TypeString, table.TypeBytes:
		s := d.str
		for {
			i := strings.IndexByte(s, escByte)
			if i < 0 {
				break
			}
			dst = append(dst, s[:i]...)
			dst = append(dst, escByte, escEsc)
			s = s[i+1:]
		}
		dst = append(dst, s...)
		return append(dst, escByte, escTerm)
	}
	panic(fmt.Sprintf("subtask: no key encoding for type %s", t))
}

// decodeKeyDatum decodes one column from the front of src and returns the
// bytes consumed.
func decodeKeyDatum(src string, t table.DataType) (Datum, int, error) {
	need := func(n int) error {
		if len(src) < n {
			return fmt.Errorf("key column of type %s: %d bytes left, need %d", t, len(src), n)
		}
		return nil
	}
	switch t.Root {
	case table.TypeBoolean:
		if err := need(1); err != nil {
			return Datum{}, 0, err
		}
		return Bool(src[0] != 0), 1, nil
	case table.TypeTinyInt:
		if err := need(1); err != nil {
			return Datum{}, 0, err
		}
		return Int(int64(int8(src[0] ^ 0x80))), 1, nil
	case table.TypeSmallInt:
		if err := need(2); err != nil {
			return Datum{}, 0, err
		}
		return Int(int64(int16(be16(src) ^ 0x8000))), 2, nil
	case table.TypeInt, table.TypeDate:
		if err := need(4); err != nil {
			return Datum{}, 0, err
		}
		return Int(int64(int32(be32(src) ^ 0x80000000))), 4, nil
	case table.TypeBigInt, table.TypeTimestamp:
		if err := need(8); err != nil {
			return Datum{}, 0, err
		}
		return Int(int64(be64(src) ^ signBit8)), 8, nil
	case table.TypeFloat:
		if err := need(4); err != nil {
			return Datum{}, 0, err
		}
		b := be32(src)
		if b&0x80000000 != 0 {
			b &^= 0x80000000
		} else {
			b = ^b
		}
		return Float(float64(math.Float32frombits(b))), 4, nil
	case table.TypeDouble:
		if err := need(8); err != nil {
			return Datum{}, 0, err
		}
		b := be64(src)
		if b&signBit8 != 0 {
			b &^= signBit8
		} else {
			b = ^b
		}
		return Float(math.Float64frombits(b)), 8, nil
	case table.TypeDecimal:
		if err := need(16); err != nil {
			return Datum{}, 0, err
		}
		hi := int64(be64(src) ^ signBit8)
		if !DecimalFits(hi) {
			return Datum{}, 0, fmt.Errorf("key column of type %s: decimal high word %d out of range", t, hi)
		}
		return Decimal(hi, be64(src[8:])), 16, nil
	case table.TypeString, table.TypeBytes:
		var sb []byte
		for i := 0; ; {
			j := strings.IndexByte(src[i:], escByte)
			if j < 0 || i+j+1 >= len(src) {
				return Datum{}, 0, fmt.Errorf("key column of type %s: unterminated string", t)
			}
			j += i
			switch src[j+1] {
			case escTerm:
				if sb == nil {
					return Str(src[:j]), j + 2, nil
				}
				sb = append(sb, src[i:j]...)
				return Str(string(sb)), j + 2, nil
			case escEsc:
				sb = append(sb, src[i:j]...)
				sb = append(sb, escByte)
				i = j + 2
			default:
				return Datum{}, 0, fmt.Errorf("key column of type %s: bad escape 0x%02x", t, src[j+1])
			}
		}
	}
	return Datum{}, 0, fmt.Errorf("no key encoding for type %s", t)
}

// be16, be32 and be64 read big-endian integers from the front of s, written
// out byte by byte so that the compiler makes each one load and a byte swap.
func be16(s string) uint16 {
	_ = s[1]
	return uint16(s[1]) | uint16(s[0])<<8
}

func be32(s string) uint32 {
	_ = s[3]
	return uint32(s[3]) | uint32(s[2])<<8 | uint32(s[1])<<16 | uint32(s[0])<<24
}

func be64(s string) uint64 {
	_ = s[7]
	return uint64(s[7]) | uint64(s[6])<<8 | uint64(s[5])<<16 | uint64(s[4])<<24 |
		uint64(s[3])<<32 | uint64(s[2])<<40 | uint64(s[1])<<48 | uint64(s[0])<<56
}

// decodeKey decodes the primary-key columns in types from the front of enc
// into dst and returns the bytes consumed.
func decodeKey(dst Row, enc string, types []table.DataType) (int, error) {
	off := 0
	for i, t := range types {
		d, n, err := decodeKeyDatum(enc[off:], t)
		if err != nil {
			return 0, err
		}
		dst[i] = d
		off += n
	}
	return off, nil
}

// splitPrefix returns the length of the key prefix (kg and key columns) of
// an encoded primary key.
func (l *layout) splitPrefix(enc string) (int, error) {
	off := 0
	for _, t := range l.pkTypes[:l.prefixCols()] {
		n, err := skipKeyDatum(enc[off:], t)
		if err != nil {
			return 0, err
		}
		off += n
	}
	return off, nil
}

func skipKeyDatum(src string, t table.DataType) (int, error) {
	if t.Root == table.TypeString || t.Root == table.TypeBytes {
		for i := 0; ; {
			j := strings.IndexByte(src[i:], escByte)
			if j < 0 || i+j+1 >= len(src) {
				return 0, fmt.Errorf("key column of type %s: unterminated string", t)
			}
			j += i
			if src[j+1] == escTerm {
				return j + 2, nil
			}
			if src[j+1] != escEsc {
				return 0, fmt.Errorf("key column of type %s: bad escape 0x%02x", t, src[j+1])
			}
			i = j + 2
		}
	}
	_, n, err := decodeKeyDatum(src, t)
	return n, err
}

// decodeSub decodes the entry-key columns of an encoded primary key.
func (l *layout) decodeSub(enc string) (Row, error) {
	p, err := l.splitPrefix(enc)
	if err != nil {
		return nil, err
	}
	sub := make(Row, len(l.sub))
	n, err := decodeKey(sub, enc[p:], l.pkTypes[l.prefixCols():])
	if err != nil {
		return nil, err
	}
	if p+n != len(enc) {
		return nil, fmt.Errorf("state %q: %d trailing bytes after the primary key", l.Name, len(enc)-p-n)
	}
	return sub, nil
}

// decodePK decodes every primary-key column (kg first) of an encoded key.
func (l *layout) decodePK(dst Row, enc string) error {
	n, err := decodeKey(dst, enc, l.pkTypes)
	if err != nil {
		return fmt.Errorf("state %q: %w", l.Name, err)
	}
	if n != len(enc) {
		return fmt.Errorf("state %q: %d trailing bytes after the primary key", l.Name, len(enc)-n)
	}
	return nil
}

// keyGroupOf decodes the key group leading an encoded key.
func keyGroupOf(enc string) int32 { return int32(be32(enc) ^ 0x80000000) }

// keyGroupBound is the encoding of key group kg alone: every key of kg sorts
// at or after it, and every key of kg-1 before it.
func keyGroupBound(kg int32) string {
	return string(binary.BigEndian.AppendUint32(nil, uint32(kg)^0x80000000))
}

// prefixEnd returns the least string greater than every string with prefix p,
// or "" when there is none (p is all 0xFF).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xFF {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
