package subtask

import "math"

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
// one allocation for the slice.
type Datum struct {
	num uint64 // integers, float bits, decimal low word
	hi  int64  // decimal high word
	str string
	set bool // false: NULL
}

// Row is the datums of some columns of a state table, in layout order.
type Row []Datum

// Null is the NULL datum.
var Null = Datum{}

// Bool returns a BOOLEAN datum.
func Bool(v bool) Datum {
	if v {
		return Datum{num: 1, set: true}
	}
	return Datum{set: true}
}

// Int returns a datum of an integer, DATE or TIMESTAMP column.
func Int(v int64) Datum { return Datum{num: uint64(v), set: true} }

// Float returns a FLOAT or DOUBLE datum.
func Float(v float64) Datum { return Datum{num: math.Float64bits(v), set: true} }

// Str returns a STRING datum, or a BYTES datum holding the string's bytes.
func Str(v string) Datum { return Datum{str: v, set: true} }

// Bytes returns a BYTES datum holding a copy of v.
func Bytes(v []byte) Datum { return Datum{str: string(v), set: true} }

// Decimal returns a DECIMAL datum of the unscaled 128-bit two's complement
// value hi·2^64 + lo.
func Decimal(hi int64, lo uint64) Datum { return Datum{num: lo, hi: hi, set: true} }

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return !d.set }

// Bool is the value of a BOOLEAN datum.
func (d Datum) Bool() bool { return d.num != 0 }

// Int is the value of an integer, DATE or TIMESTAMP datum.
func (d Datum) Int() int64 { return int64(d.num) }

// Float is the value of a FLOAT or DOUBLE datum.
func (d Datum) Float() float64 { return math.Float64frombits(d.num) }

// Str is the value of a STRING or BYTES datum.
func (d Datum) Str() string { return d.str }

// Decimal is the unscaled value of a DECIMAL datum.
func (d Datum) Decimal() (hi int64, lo uint64) { return d.hi, d.num }

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
