package runtime

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/lakestate/lakestate/table"
)

// keySpec is the key of a keyed exchange or a keyed operator: columns of the
// input row and their types.
type keySpec struct {
	cols  []int
	types []table.DataType
}

func newKeySpec(s Schema, cols []int) (keySpec, error) {
	if len(cols) == 0 {
		return keySpec{}, fmt.Errorf("empty key")
	}
	k := keySpec{cols: cols, types: make([]table.DataType, len(cols))}
	for i, c := range cols {
		if c < 0 || c >= len(s) {
			return keySpec{}, fmt.Errorf("key column %d outside the %d columns of the input", c, len(s))
		}
		k.types[i] = s[c].Type
	}
	return k, nil
}

// hash is the 32-bit hash code of a row's key, in the spirit of Java's
// hashCode so that integer keys spread as they do in Flink: a single column
// hashes to the column's hash, several combine as java.util.Arrays.hashCode
// does (31·h + h_i from 1).
func (k *keySpec) hash(r Row) int32 {
	if len(k.cols) == 1 {
		return hashDatum(k.types[0], r[k.cols[0]])
	}
	h := int32(1)
	for i, c := range k.cols {
		h = 31*h + hashDatum(k.types[i], r[c])
	}
	return h
}

// hashDatum is Java's hash code of a value: Long.hashCode for integers,
// dates and timestamps, Double.hashCode for floats, Boolean.hashCode,
// String.hashCode (over UTF-16 code units) for strings and bytes, and 0 for
// NULL.
func hashDatum(t table.DataType, d Datum) int32 {
	if d.IsNull() {
		return 0
	}
	switch t.Root {
	case table.TypeBoolean:
		if d.Bool() {
			return 1231
		}
		return 1237
	case table.TypeFloat, table.TypeDouble:
		return hashLong(int64(math.Float64bits(d.Float())))
	case table.TypeString, table.TypeBytes:
		return hashString(d.Str())
	case table.TypeDecimal:
		hi, lo := d.Decimal()
		return 31*hashLong(hi) + hashLong(int64(lo))
	default:
		return hashLong(d.Int())
	}
}

func hashLong(v int64) int32 { return int32(v ^ int64(uint64(v)>>32)) }

func hashString(s string) int32 {
	var h int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 { // a surrogate pair in UTF-16
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
