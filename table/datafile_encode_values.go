package table

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
)

// parquet-go's column writers take one parquet.Value per cell, and the
// values of an optional column must carry their definition level, which
// only the Value.Level method sets: a call per cell that the compiler does
// not inline, and most of the cost of handing a page of an optional column
// to parquet-go. A value differs from its column's other values only in its
// data words (a pointer and a 64-bit word), so the writer copies a template
// value made by parquet-go's own constructors and sets those two words.
// valueWordsOK checks at start-up, against the constructors, that this
// makes exactly the values they make; if parquet-go's layout ever differs,
// the writer falls back to the constructors.

// valueWords is the leading data words of a parquet.Value.
type valueWords struct {
	ptr *byte
	u64 uint64
}

var valueWordsOK = checkValueWords()

func checkValueWords() bool {
	if unsafe.Sizeof(parquet.Value{}) < unsafe.Sizeof(valueWords{}) {
		return false
	}
	b := []byte("value")
	for _, c := range []struct{ got, want parquet.Value }{
		{withWords(parquet.Int64Value(0).Level(0, 1, 7), nil, 0x8102030405060708), parquet.Int64Value(-0x7efdfcfbfaf9f8f8).Level(0, 1, 7)},
		{withWords(parquet.Int32Value(0).Level(0, 1, 3), nil, 1<<64-5), parquet.Int32Value(-5).Level(0, 1, 3)},
		{withWords(parquet.DoubleValue(0).Level(0, 1, 2), nil, math.Float64bits(-1.5)), parquet.DoubleValue(-1.5).Level(0, 1, 2)},
		{withWords(parquet.FloatValue(0).Level(0, 1, 4), nil, uint64(math.Float32bits(-2.5))), parquet.FloatValue(-2.5).Level(0, 1, 4)},
		{withWords(parquet.ByteArrayValue(nil).Level(0, 1, 9), &b[1], 3), parquet.ByteArrayValue(b[1:4]).Level(0, 1, 9)},
	} {
		if c.got != c.want {
			return false
		}
	}
	return true
}

func withWords(v parquet.Value, ptr *byte, u64 uint64) parquet.Value {
	w := (*valueWords)(unsafe.Pointer(&v))
	w.ptr, w.u64 = ptr, u64
	return v
}

// fillFromTemplate sets vs to rows [lo,hi) of an optional column as non-null
// values of column col, for the Arrow types it knows; false for others.
// Rows that are null get a data word anyway (Arrow keeps a slot for them);
// the caller overwrites them.
func fillFromTemplate(vs []parquet.Value, a arrow.Array, col, lo, hi int) bool {
	switch c := a.(type) {
	case *array.Int64:
		fillWords(vs, parquet.Int64Value(0).Level(0, 1, col), c.Int64Values()[lo:hi])
	case *array.Int32:
		fillWords(vs, parquet.Int32Value(0).Level(0, 1, col), c.Int32Values()[lo:hi])
	case *array.Int16:
		fillWords(vs, parquet.Int32Value(0).Level(0, 1, col), c.Int16Values()[lo:hi])
	case *array.Int8:
		fillWords(vs, parquet.Int32Value(0).Level(0, 1, col), c.Int8Values()[lo:hi])
	case *array.Date32:
		fillWords(vs, parquet.Int32Value(0).Level(0, 1, col), c.Date32Values()[lo:hi])
	case *array.Timestamp:
		if !int64Timestamps(c) {
			return false
		}
		fillWords(vs, parquet.Int64Value(0).Level(0, 1, col), c.TimestampValues()[lo:hi])
	case *array.Float64:
		fillDoubleWords(vs, parquet.DoubleValue(0).Level(0, 1, col), c.Float64Values()[lo:hi])
	case *array.Float32:
		fillFloatWords(vs, parquet.FloatValue(0).Level(0, 1, col), c.Float32Values()[lo:hi])
	case *array.String:
		offs := c.ValueOffsets()
		fillByteArrayWords(vs, parquet.ByteArrayValue(nil).Level(0, 1, col), c.ValueBytes(), offs[lo:hi+1], offs[0])
	case *array.Binary:
		offs := c.ValueOffsets()
		fillByteArrayWords(vs, parquet.ByteArrayValue(nil).Level(0, 1, col), c.ValueBytes(), offs[lo:hi+1], offs[0])
	default:
		return false
	}
	return true
}

// int64Timestamps reports whether a timestamp column's values are written
// as parquet INT64 in their own unit (precision up to 6: milliseconds or
// microseconds); nanoseconds are written as INT96.
func int64Timestamps(c *array.Timestamp) bool {
	return c.DataType().(*arrow.TimestampType).Unit != arrow.Nanosecond
}

// fillWords sets vs[i] to the template with data word u64 = src[i]
// (sign-extended as parquet-go's constructors do: an INT32 of a narrower
// integer holds the same sign-extended word).
func fillWords[T ~int8 | ~int16 | ~int32 | ~int64](vs []parquet.Value, tmpl parquet.Value, src []T) {
	vs = vs[:len(src)]
	for i, x := range src {
		vs[i] = tmpl
		(*valueWords)(unsafe.Pointer(&vs[i])).u64 = uint64(x)
	}
}

func fillDoubleWords(vs []parquet.Value, tmpl parquet.Value, src []float64) {
	vs = vs[:len(src)]
	for i, x := range src {
		vs[i] = tmpl
		(*valueWords)(unsafe.Pointer(&vs[i])).u64 = math.Float64bits(x)
	}
}

func fillFloatWords(vs []parquet.Value, tmpl parquet.Value, src []float32) {
	vs = vs[:len(src)]
	for i, x := range src {
		vs[i] = tmpl
		(*valueWords)(unsafe.Pointer(&vs[i])).u64 = uint64(math.Float32bits(x))
	}
}

// fillByteArrayWords sets vs[i] to the template holding data[offs[i]-base :
// offs[i+1]-base].
func fillByteArrayWords(vs []parquet.Value, tmpl parquet.Value, data []byte, offs []int32, base int32) {
	vs = vs[:len(offs)-1]
	for i := range vs {
		a, b := offs[i]-base, offs[i+1]-base
		vs[i] = tmpl
		w := (*valueWords)(unsafe.Pointer(&vs[i]))
		w.ptr, w.u64 = unsafe.SliceData(data[a:b]), uint64(b-a)
	}
}
