package table

import (
	"bytes"
	"cmp"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// keyOrder checks that rows are strictly ascending by key without encoding
// every key: it compares neighbouring rows column by column on the Arrow
// values, for the key types whose natural order is the key order (see
// KeyBatch). steps is scratch, reused across calls.
type keyOrder struct {
	steps []int8 // steps[i]: the order of row i against row i+1 so far
}

// strictlyAscending reports whether rows [0,n) of the key columns ascend
// strictly. ok is false when it cannot tell (a column holds nulls or has a
// type without a typed comparison here); the caller compares encoded keys.
func (o *keyOrder) strictlyAscending(cols []arrow.Array) (ascending, ok bool) {
	if len(cols) == 0 {
		return false, false
	}
	n := cols[0].Len()
	for _, c := range cols {
		if c.NullN() > 0 || c.Len() != n || !orderedArrow(c) {
			return false, false
		}
	}
	if n < 2 {
		return true, true
	}
	if cap(o.steps) < n-1 {
		o.steps = make([]int8, n-1)
	}
	steps := o.steps[:n-1]
	clear(steps)
	for _, c := range cols {
		switch a := c.(type) {
		case *array.Int8:
			orderSteps(steps, a.Int8Values())
		case *array.Int16:
			orderSteps(steps, a.Int16Values())
		case *array.Int32:
			orderSteps(steps, a.Int32Values())
		case *array.Int64:
			orderSteps(steps, a.Int64Values())
		case *array.Date32:
			orderSteps(steps, a.Date32Values())
		case *array.Timestamp:
			orderSteps(steps, a.TimestampValues())
		case *array.String:
			offs, data := a.ValueOffsets(), a.ValueBytes()
			base := offs[0]
			for i, s := range steps {
				if s == 0 {
					x := data[offs[i]-base : offs[i+1]-base]
					y := data[offs[i+1]-base : offs[i+2]-base]
					steps[i] = int8(bytes.Compare(x, y))
				}
			}
		case *array.Binary:
			for i, s := range steps {
				if s == 0 {
					steps[i] = int8(bytes.Compare(a.Value(i), a.Value(i+1)))
				}
			}
		}
	}
	for _, s := range steps {
		if s >= 0 {
			return false, true
		}
	}
	return true, true
}

// orderedArrow reports whether strictlyAscending compares a column's type.
// Floats (NaN, signed zeros), booleans and decimals go through the key
// encoding instead.
func orderedArrow(c arrow.Array) bool {
	switch c.(type) {
	case *array.Int8, *array.Int16, *array.Int32, *array.Int64, *array.Date32,
		*array.Timestamp, *array.String, *array.Binary:
		return true
	}
	return false
}

func orderSteps[T cmp.Ordered](steps []int8, vs []T) {
	vs = vs[:len(steps)+1]
	for i, s := range steps {
		if s == 0 {
			steps[i] = int8(cmp.Compare(vs[i], vs[i+1]))
		}
	}
}
