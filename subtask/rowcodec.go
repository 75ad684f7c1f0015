package subtask

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/lakestate/lakestate/table"
)

// The row codec stores a row's non-key datums (values, write time) for the
// memory backend's snapshot and Pebble values. Per datum: a tag byte (0 NULL,
// 1 set), then BOOLEAN 1 byte; integers, DATE and TIMESTAMP a zigzag varint;
// FLOAT 4 and DOUBLE 8 little-endian bytes; DECIMAL 16 bytes (high, low
// little-endian); STRING and BYTES a uvarint length and the bytes.

func appendRow(dst []byte, types []table.DataType, r Row) []byte {
	for i, t := range types {
		d := r[i]
		if d.IsNull() {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch t.Root {
		case table.TypeBoolean:
			dst = append(dst, byte(d.num&1))
		case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt, table.TypeDate, table.TypeTimestamp:
			dst = binary.AppendVarint(dst, int64(d.num))
		case table.TypeFloat:
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(d.Float())))
		case table.TypeDouble:
			dst = binary.LittleEndian.AppendUint64(dst, d.num)
		case table.TypeDecimal:
			hi, lo := d.Decimal()
			dst = binary.LittleEndian.AppendUint64(dst, uint64(hi))
			dst = binary.LittleEndian.AppendUint64(dst, lo)
		case table.TypeString, table.TypeBytes:
			dst = binary.AppendUvarint(dst, uint64(len(d.str)))
			dst = append(dst, d.str...)
		default:
			panic(fmt.Sprintf("subtask: no row encoding for type %s", t))
		}
	}
	return dst
}

// decodeRow decodes a row of the given types from the front of src into a new
// Row and returns the bytes consumed.
func decodeRow(src []byte, types []table.DataType) (Row, int, error) {
	r := make(Row, len(types))
	off := 0
	for i, t := range types {
		if off >= len(src) {
			return nil, 0, fmt.Errorf("column %d: row ends early", i)
		}
		tag := src[off]
		off++
		if tag == 0 {
			continue
		}
		if tag != 1 {
			return nil, 0, fmt.Errorf("column %d: bad null tag %d", i, tag)
		}
		rest := src[off:]
		switch t.Root {
		case table.TypeBoolean:
			if len(rest) < 1 {
				return nil, 0, fmt.Errorf("column %d: boolean ends early", i)
			}
			r[i] = Bool(rest[0] != 0)
			off++
		case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt, table.TypeDate, table.TypeTimestamp:
			v, n := binary.Varint(rest)
			if n <= 0 {
				return nil, 0, fmt.Errorf("column %d: bad varint", i)
			}
			r[i] = Int(v)
			off += n
		case table.TypeFloat:
			if len(rest) < 4 {
				return nil, 0, fmt.Errorf("column %d: float ends early", i)
			}
			r[i] = Float(float64(math.Float32frombits(binary.LittleEndian.Uint32(rest))))
			off += 4
		case table.TypeDouble:
			if len(rest) < 8 {
				return nil, 0, fmt.Errorf("column %d: double ends early", i)
			}
			r[i] = Datum{num: binary.LittleEndian.Uint64(rest), hiSet: setBit}
			off += 8
		case table.TypeDecimal:
			if len(rest) < 16 {
				return nil, 0, fmt.Errorf("column %d: decimal ends early", i)
			}
			hi := int64(binary.LittleEndian.Uint64(rest))
			if !DecimalFits(hi) {
				return nil, 0, fmt.Errorf("column %d: decimal high word %d out of range", i, hi)
			}
			r[i] = Decimal(hi, binary.LittleEndian.Uint64(rest[8:]))
			off += 16
		case table.TypeString, table.TypeBytes:
			n, k := binary.Uvarint(rest)
			if k <= 0 || n > uint64(len(rest)-k) {
				return nil, 0, fmt.Errorf("column %d: bad string length", i)
			}
			r[i] = Str(string(rest[k : k+int(n)]))
			off += k + int(n)
		default:
			return nil, 0, fmt.Errorf("column %d: no row encoding for type %s", i, t)
		}
	}
	return r, off, nil
}

// valTypes lists the types of a layout's non-key datums.
func (l *layout) valTypes() []table.DataType {
	types := make([]table.DataType, 0, l.nVals)
	for _, c := range l.Value {
		c.Type.Nullable = true
		types = append(types, c.Type)
	}
	if l.hasTTL() {
		types = append(types, table.BigInt())
	}
	return types
}
