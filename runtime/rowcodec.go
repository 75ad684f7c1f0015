package runtime

import (
	"encoding/binary"
	"math/bits"

	"github.com/lakestate/lakestate/subtask"
)

// The row codec writes rows without their schema, exactly: a datum is either
// a string (Str), a number (Int, Float bits, Bool) or a decimal's two words,
// and decodes to an equal Datum.
//
//	uvarint column count, then per datum a tag byte:
//	  0 NULL; 1 number: varint; 2 string: uvarint length, bytes;
//	  3 decimal: varint low word, varint high word

const (
	tagNull = iota
	tagNumber
	tagString
	tagDecimal
)

func appendRow(dst []byte, r Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for _, d := range r {
		dst = appendDatum(dst, d)
	}
	return dst
}

// rowSize is the length of a row's encoding.
func rowSize(r Row) int {
	n := uvarintSize(uint64(len(r))) + len(r)
	for _, d := range r {
		switch hi, lo := d.Decimal(); {
		case d.IsNull():
		case d.Str() != "":
			n += uvarintSize(uint64(len(d.Str()))) + len(d.Str())
		case hi != 0:
			n += varintSize(int64(lo)) + varintSize(hi)
		default:
			n += varintSize(int64(lo))
		}
	}
	return n
}

func uvarintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func varintSize(v int64) int { return uvarintSize(uint64(v)<<1 ^ uint64(v>>63)) }

func appendDatum(dst []byte, d Datum) []byte {
	switch hi, lo := d.Decimal(); {
	case d.IsNull():
		dst = append(dst, tagNull)
	case d.Str() != "":
		dst = append(dst, tagString)
		dst = binary.AppendUvarint(dst, uint64(len(d.Str())))
		dst = append(dst, d.Str()...)
	case hi != 0:
		dst = append(dst, tagDecimal)
		dst = binary.AppendVarint(dst, int64(lo))
		dst = binary.AppendVarint(dst, hi)
	default:
		dst = append(dst, tagNumber)
		dst = binary.AppendVarint(dst, int64(lo))
	}
	return dst
}

func (r *byteReader) row() Row {
	n := r.uvarint("column count")
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)-r.off) {
		r.fail("column count %d exceeds the %d bytes left", n, len(r.buf)-r.off)
		return nil
	}
	row := make(Row, n)
	for i := range row {
		switch tag := r.byte("tag"); tag {
		case tagNull:
		case tagNumber:
			row[i] = subtask.Int(r.varint("number"))
		case tagString:
			row[i] = subtask.Str(string(r.bytes("string")))
		case tagDecimal:
			lo := r.varint("decimal low word")
			hi := r.varint("decimal high word")
			if r.err == nil && !subtask.DecimalFits(hi) {
				r.fail("column %d: decimal high word %d out of range", i, hi)
			}
			if r.err == nil {
				row[i] = subtask.Decimal(hi, uint64(lo))
			}
		default:
			r.fail("column %d: unknown tag %d", i, tag)
		}
		if r.err != nil {
			return nil
		}
	}
	return row
}

// skipRow reads past a row, checking its encoding as row does. It is the
// inner loop of a ChangelogTable's commit, so it walks the bytes without
// the reader's bookkeeping per field; a row it cannot read is read again
// by row, which names the problem.
func (r *byteReader) skipRow() {
	if r.err != nil {
		return
	}
	if end, ok := rowEnd(r.buf, r.off); ok {
		r.off = end
		return
	}
	if r.row(); r.err == nil {
		r.fail("row not read past") // row accepts no more than rowEnd
	}
}

// rowEnd returns where the row encoded at b[off:] ends, or false when it
// is not a row's encoding.
func rowEnd(b []byte, off int) (int, bool) {
	cols, n := binary.Uvarint(b[off:])
	if n <= 0 || cols > uint64(len(b)-off-n) {
		return 0, false
	}
	off += n
	for ; cols > 0; cols-- {
		if off >= len(b) {
			return 0, false
		}
		tag := b[off]
		off++
		words := 0
		switch tag {
		case tagNull:
		case tagNumber:
			words = 1
		case tagDecimal:
			words = 2
		case tagString:
			l, n := binary.Uvarint(b[off:])
			if n <= 0 || l > uint64(len(b)-off-n) {
				return 0, false
			}
			off += n + int(l)
		default:
			return 0, false
		}
		for ; words > 0; words-- {
			if _, n := binary.Varint(b[off:]); n > 0 {
				off += n
			} else {
				return 0, false
			}
		}
	}
	return off, true
}

// rowKey is a row's encoding, a map key that tells rows apart exactly.
func rowKey(dst []byte, r Row) []byte { return appendRow(dst, r) }
