package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
)

// The values of a page writer's open pages: appended from Arrow columns,
// their bounds, and the sizes that cut pages.

// bytesOf is the memory of a slice of fixed-width values.
func bytesOf[T any](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// appendArrow appends rows [lo,hi) of a column to column c's open page.
func (w *pageWriter) appendArrow(c *pageColumn, a arrow.Array, t DataType, lo, hi int) {
	n := hi - lo
	nulls := 0
	if c.optional {
		start := len(c.levels)
		c.levels = slices.Grow(c.levels, n)[:start+n]
		lv := c.levels[start:]
		if a.NullN() == 0 {
			for i := range lv {
				lv[i] = 1
			}
		} else {
			for i := range lv {
				if a.IsNull(lo + i) {
					lv[i] = 0
					nulls++
				} else {
					lv[i] = 1
				}
			}
		}
	}
	c.rows += n
	c.nulls += nulls
	if nulls == 0 {
		switch v := a.(type) {
		case *array.Int64:
			c.appendFixed(bytesOf(v.Int64Values()[lo:hi]), n)
			return
		case *array.Int32:
			c.appendFixed(bytesOf(v.Int32Values()[lo:hi]), n)
			return
		case *array.Date32:
			c.appendFixed(bytesOf(v.Date32Values()[lo:hi]), n)
			return
		case *array.Timestamp:
			c.appendFixed(bytesOf(v.TimestampValues()[lo:hi]), n)
			return
		case *array.Float64:
			c.appendFixed(bytesOf(v.Float64Values()[lo:hi]), n)
			return
		case *array.Float32:
			c.appendFixed(bytesOf(v.Float32Values()[lo:hi]), n)
			return
		}
	}
	c.detach()
	valid := func(i int) bool { return nulls == 0 || !a.IsNull(i) }
	var nullable arrow.Array // nil: no row of [lo,hi) is null
	if nulls > 0 {
		nullable = a
	}
	switch v := a.(type) {
	case *array.Int64:
		appendValid(c, v.Int64Values(), lo, hi, valid)
	case *array.Int32:
		appendValid(c, v.Int32Values(), lo, hi, valid)
	case *array.Date32:
		appendValid(c, v.Date32Values(), lo, hi, valid)
	case *array.Timestamp:
		appendValid(c, v.TimestampValues(), lo, hi, valid)
	case *array.Float64:
		appendValid(c, v.Float64Values(), lo, hi, valid)
	case *array.Float32:
		appendValid(c, v.Float32Values(), lo, hi, valid)
	case *array.Int8:
		for i, x := range v.Int8Values()[lo:hi] {
			if valid(lo + i) {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(int32(x)))
			}
		}
	case *array.Int16:
		for i, x := range v.Int16Values()[lo:hi] {
			if valid(lo + i) {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(int32(x)))
			}
		}
	case *array.Decimal128:
		for i := lo; i < hi; i++ {
			if !valid(i) {
				continue
			}
			low := v.Value(i).LowBits()
			if t.Precision <= 9 {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(low))
			} else {
				c.plain = binary.LittleEndian.AppendUint64(c.plain, low)
			}
		}
	case *array.String:
		offs, data := v.ValueOffsets(), v.ValueBytes()
		w.appendByteArrays(c, data, offs, lo, hi, nullable)
	case *array.Binary:
		offs, data := v.ValueOffsets(), v.ValueBytes()
		w.appendByteArrays(c, data, offs, lo, hi, nullable)
	default:
		panic(fmt.Sprintf("data file: page writer got arrow array %T", a))
	}
}

// appendFixed appends the PLAIN bytes of n values (all the appended rows'):
// by reference when they start the page.
func (c *pageColumn) appendFixed(b []byte, n int) {
	if c.rows == n {
		c.ref = b
		return
	}
	c.detach()
	c.plain = append(c.plain, b...)
}

// copyPage makes the column's open page a copy of k's, a column of the
// same type.
func (c *pageColumn) copyPage(k *pageColumn) {
	c.ref = k.ref
	c.plain = append(c.plain[:0], k.plain...)
	c.levels = append(c.levels[:0], k.levels...)
	c.rows, c.nulls, c.byteValues = k.rows, k.nulls, k.byteValues
	c.minOff, c.maxOff = k.minOff, k.maxOff
}

// detach copies referenced values into plain.
func (c *pageColumn) detach() {
	if c.ref != nil {
		c.plain = append(c.plain[:0], c.ref...)
		c.ref = nil
	}
}

// values is the page's PLAIN values.
func (c *pageColumn) values() []byte {
	if c.ref != nil {
		return c.ref
	}
	return c.plain
}

func appendValid[T any](c *pageColumn, vs []T, lo, hi int, valid func(int) bool) {
	for i := lo; i < hi; i++ {
		if valid(i) {
			c.plain = append(c.plain, bytesOf(vs[i:i+1])...)
		}
	}
}

// appendByteArrays appends the values of rows [lo,hi) that are not null
// (a nil: none is) as PLAIN byte arrays and keeps the page's bounds as
// parquet-go's byte array pages find them (bytes.Compare against the least,
// then the greatest so far); a first byte that differs decides most
// comparisons without the call.
func (w *pageWriter) appendByteArrays(c *pageColumn, data []byte, offs []int32, lo, hi int, a arrow.Array) {
	base := offs[0]
	plain := slices.Grow(c.plain, int(offs[hi]-offs[lo])+4*(hi-lo))
	// plain does not move below: the bounds may alias it
	var least, most []byte
	if len(plain) > 0 {
		least, most = c.byteArrayAtIn(plain, c.minOff), c.byteArrayAtIn(plain, c.maxOff)
	}
	for i := lo; i < hi; i++ {
		if a != nil && a.IsNull(i) {
			continue
		}
		v := data[offs[i]-base : offs[i+1]-base]
		at := len(plain)
		plain = plain[:at+4+len(v)]
		binary.LittleEndian.PutUint32(plain[at:], uint32(len(v)))
		v = plain[at+4 : at+4+copy(plain[at+4:], v)]
		c.byteValues += int64(len(v))
		switch {
		case at == 0:
			c.minOff, c.maxOff, least, most = 0, 0, v, v
		case byteArrayLess(v, least):
			c.minOff, least = at, v
		case byteArrayLess(most, v):
			c.maxOff, most = at, v
		}
	}
	c.plain = plain
}

// byteArrayLess is bytes.Compare(x, y) < 0.
func byteArrayLess(x, y []byte) bool {
	if len(x) > 0 && len(y) > 0 && x[0] != y[0] {
		return x[0] < y[0]
	}
	return bytes.Compare(x, y) < 0
}

// byteArrayAt is the byte array whose length prefix is at off of plain.
func (c *pageColumn) byteArrayAt(off int) []byte { return c.byteArrayAtIn(c.plain, off) }

func (c *pageColumn) byteArrayAtIn(plain []byte, off int) []byte {
	n := int(binary.LittleEndian.Uint32(plain[off:]))
	return plain[off+4 : off+4+n]
}

// appendInt64s appends required INT64 values (sequence numbers).
func (c *pageColumn) appendInt64s(vs []int64) {
	c.rows += len(vs)
	c.appendFixed(bytesOf(vs), len(vs))
}

// appendKinds appends value kinds as indexes of the chunk's dictionary.
func (c *pageColumn) appendKinds(kinds []ValueKind, n int) {
	for i := range n {
		k := int32(KindInsert)
		if kinds != nil {
			k = int32(kinds[i])
		}
		at := slices.Index(c.dictVals, k)
		if at < 0 {
			at = len(c.dictVals)
			c.dictVals = append(c.dictVals, k)
		}
		c.idx = append(c.idx, int32(at))
	}
	c.rows += n
}

// bufferedSize is parquet-go's size of the column's buffered values (its
// column buffer's Size), which decides page and row group cuts.
func (c *pageColumn) bufferedSize() int {
	if c.dict {
		return 4 * len(c.idx)
	}
	n := len(c.values())
	if c.optional {
		n += 4*c.rows + len(c.levels)
	}
	return n
}

// afterAppend ends the open page of a column whose buffered values reached
// parquet-go's page buffer size, as its column writer does.
func (w *pageWriter) afterAppend(c *pageColumn) error {
	if c.bufferedSize() >= w.bufMax {
		return w.flushPage(c)
	}
	return nil
}

// bounds are the page's min and max values, as parquet-go's pages compute
// them, and whether it has any.
func (w *pageWriter) bounds(c *pageColumn) (parquet.Value, parquet.Value, bool) {
	switch {
	case c.dict:
		if len(c.idx) == 0 {
			return parquet.Value{}, parquet.Value{}, false
		}
		lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
		for _, x := range c.idx {
			v := c.dictVals[x]
			lo, hi = min(lo, v), max(hi, v)
		}
		return parquet.Int32Value(lo), parquet.Int32Value(hi), true
	case c.rows == c.nulls:
		return parquet.Value{}, parquet.Value{}, false
	case c.width == 0 && c.byteValues == 0:
		// parquet-go's page of empty values holds no bytes, and its bounds
		// are nil slices, which statistics leave out
		return parquet.ByteArrayValue(nil), parquet.ByteArrayValue(nil), true
	case c.width == 0:
		return parquet.ByteArrayValue(c.byteArrayAt(c.minOff)), parquet.ByteArrayValue(c.byteArrayAt(c.maxOff)), true
	}
	switch c.kind {
	case parquet.Int64:
		lo, hi := intBounds(unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(c.values()))), c.rows-c.nulls))
		return parquet.Int64Value(lo), parquet.Int64Value(hi), true
	case parquet.Int32:
		lo, hi := intBounds(unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(c.values()))), c.rows-c.nulls))
		return parquet.Int32Value(lo), parquet.Int32Value(hi), true
	}
	// floats: parquet-go's own bounds (NaN, signed zeros)
	return c.typ.NewPage(0, c.rows-c.nulls, c.typ.NewValues(c.values(), nil)).Bounds()
}

// intBounds is the least and greatest of vs, not empty.
func intBounds[T int32 | int64](vs []T) (T, T) {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}
