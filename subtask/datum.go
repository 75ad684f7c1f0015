package subtask

import (
	"fmt"
	"math"
)

// Datum is one scalar of a state row. The zero Datum is NULL. Which accessor
// is meaningful follows the column's table.DataType:
//
//	BOOLEAN                      Bool
//	TINYINT..BIGINT, DATE        Int (DATE: days since the epoch)
//	TIMESTAMP(p)                 Int, in the Arrow unit of p: millis (p<=3),
//	                             micros (p<=6) or nanos
//	FLOAT, DOUBLE                Float
//	STRING, BYTES                Str (bytes as a string, no copy on read)
//	DECIMAL(p,s)                 Decimal (the unscaled 128-bit value)
//
// A Datum holds no pointers but a string's, so rows of fixed-width types are
// one allocation for the slice. It is four words: a row's datums are most of
// what the join and the state buffers hold, copy and have the garbage
// collector scan, so NULL-ness takes no word of its own. It lives in hiSet,
// the decimal high word with its sign bit flipped, which is zero only for
// NULL: the one high word it cannot hold, -2^63, belongs to no decimal of
// at most 38 digits (|v| < 10^38 puts the high word above -5.5·10^18).
type Datum struct {
	num   uint64 // integers, float bits, decimal low word
	hiSet uint64 // decimal high word ^ setBit; 0: NULL
	str   string
}

// setBit is hiSet's sign bit: hiSet is the decimal high word with it flipped,
// so every set datum that is not a decimal has hiSet == setBit.
const setBit = uint64(1) << 63

// Row is the datums of some columns of a state table, in layout order.
type Row []Datum

// Null is the NULL datum.
var Null = Datum{}

// Bool returns a BOOLEAN datum.
func Bool(v bool) Datum {
	if v {
		return Datum{num: 1, hiSet: setBit}
	}
	return Datum{hiSet: setBit}
}

// Int returns a datum of an integer, DATE or TIMESTAMP column.
func Int(v int64) Datum { return Datum{num: uint64(v), hiSet: setBit} }

// Float returns a FLOAT or DOUBLE datum.
func Float(v float64) Datum { return Datum{num: math.Float64bits(v), hiSet: setBit} }

// Str returns a STRING datum, or a BYTES datum holding the string's bytes.
func Str(v string) Datum { return Datum{str: v, hiSet: setBit} }

// Bytes returns a BYTES datum holding a copy of v.
func Bytes(v []byte) Datum { return Datum{str: string(v), hiSet: setBit} }

// Decimal returns a DECIMAL datum of the unscaled 128-bit two's complement
// value hi·2^64 + lo. The value has at most 38 digits (DecimalFits): a
// decoder checks a high word it reads with DecimalFits first.
func Decimal(hi int64, lo uint64) Datum {
	if !DecimalFits(hi) {
		panic(fmt.Sprintf("subtask: decimal high word %d: not a value of at most 38 digits", hi))
	}
	return Datum{num: lo, hiSet: uint64(hi) ^ setBit}
}

// DecimalFits reports whether Decimal takes a value of high word hi. It
// takes every high word but -2^63, which no value of at most 38 digits has.
func DecimalFits(hi int64) bool { return hi != math.MinInt64 }

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.hiSet == 0 }

// Bool is the value of a BOOLEAN datum.
func (d Datum) Bool() bool { return d.num != 0 }

// Int is the value of an integer, DATE or TIMESTAMP datum.
func (d Datum) Int() int64 { return int64(d.num) }

// Float is the value of a FLOAT or DOUBLE datum.
func (d Datum) Float() float64 { return math.Float64frombits(d.num) }

// Str is the value of a STRING or BYTES datum.
func (d Datum) Str() string { return d.str }

// Decimal is the unscaled value of a DECIMAL datum; (0, 0) for NULL.
func (d Datum) Decimal() (hi int64, lo uint64) {
	if d.hiSet == 0 {
		return 0, 0
	}
	return int64(d.hiSet ^ setBit), d.num
}

// Equal reports whether two datums are identical. Floats compare by bits, so
// NaN equals itself: equality here means "nothing to write", not SQL equality.
func (d Datum) Equal(o Datum) bool { return d == o }

// Equal reports whether two rows hold identical datums.
func (r Row) Equal(o Row) bool {
	if len(r) != len(o) {
		return false
	}
	if len(r) == 0 || &r[0] == &o[0] {
		return true // one slice: a row kept from the image it is compared with
	}
	for i := range r {
		if r[i] != o[i] {
			return false
		}
	}
	return true
}
