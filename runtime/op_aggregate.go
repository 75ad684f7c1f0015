package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// AggKind is an aggregate function.
type AggKind uint8

const (
	// AggCount is COUNT(*): the number of rows.
	AggCount AggKind = iota + 1
	// AggSum is SUM(col); NULL when every value is NULL.
	AggSum
	// AggMin and AggMax keep the extreme value. They take no retractions:
	// that would need every value of the group.
	AggMin
	AggMax
	// AggAvg is SUM(col)/COUNT(col) in the column's type; integer averages
	// truncate, as SQL's AVG on BIGINT does.
	AggAvg
)

func (k AggKind) String() string {
	return [...]string{"?", "COUNT", "SUM", "MIN", "MAX", "AVG"}[min(int(k), 5)]
}

// Agg is one aggregate of a group aggregate: a function of an input column
// (ignored by AggCount), named in the output schema by Name.
type Agg struct {
	Kind AggKind
	Col  int
	Name string
}

// Count, Sum, Min, Max and Avg build aggregates.
func Count(name string) Agg        { return Agg{Kind: AggCount, Name: name} }
func Sum(name string, col int) Agg { return Agg{Kind: AggSum, Col: col, Name: name} }
func Min(name string, col int) Agg { return Agg{Kind: AggMin, Col: col, Name: name} }
func Max(name string, col int) Agg { return Agg{Kind: AggMax, Col: col, Name: name} }
func Avg(name string, col int) Agg { return Agg{Kind: AggAvg, Col: col, Name: name} }

// Aggregate groups the stream by the key columns and computes aggs per
// group, with retractions: its output row is the key columns followed by one
// column per aggregate, and a group's row is inserted when the group appears,
// updated (-U/+U) when a batch changes it and deleted when its last row is
// retracted. The accumulators live in a value store, one row per group.
func Aggregate(name string, in Stream, keys []int, aggs ...Agg) Stream {
	spec := &aggSpec{name: name, aggs: aggs}
	var err error
	if spec.key, err = newKeySpec(in.schema, keys); err != nil {
		in.g.fail("aggregate %q: %v", name, err)
		return in
	}
	out := make(Schema, 0, len(keys)+len(aggs))
	for _, k := range keys {
		out = append(out, in.schema[k])
	}
	accs, err := spec.accumulators(in.schema)
	if err != nil {
		in.g.fail("aggregate %q: %v", name, err)
		return in
	}
	out = append(out, accs...)
	for i := range out[:len(keys)] {
		out[i].Type.Nullable = false
	}
	spec.keyCols = columns("k", in.schema, keys, true)
	return Apply(name, []Stream{in}, [][]int{keys}, out, func() Operator { return &aggOp{spec: spec} })
}

type aggSpec struct {
	name    string
	key     keySpec
	aggs    []Agg
	float   []bool
	keyCols []subtask.Column
	value   []subtask.Column
}

// accumulators checks the aggregates against the input schema, lays out
// their accumulators in the value store (a row count, then per aggregate
// its value and the count of non-null inputs) and returns the aggregates'
// output columns.
func (spec *aggSpec) accumulators(in Schema) ([]Column, error) {
	out := make([]Column, 0, len(spec.aggs))
	spec.value = []subtask.Column{{Name: "rows", Type: table.BigInt()}}
	for i, a := range spec.aggs {
		t := table.BigInt()
		if a.Kind != AggCount {
			if a.Col < 0 || a.Col >= len(in) {
				return nil, fmt.Errorf("%s of column %d outside the %d columns of the input", a.Kind, a.Col, len(in))
			}
			t = in[a.Col].Type
			switch t.Root {
			case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt, table.TypeFloat, table.TypeDouble:
			default:
				if a.Kind != AggMin && a.Kind != AggMax || (t.Root != table.TypeDate && t.Root != table.TypeTimestamp) {
					return nil, fmt.Errorf("%s of a %s column", a.Kind, t)
				}
			}
			t.Nullable = true
		}
		spec.float = append(spec.float, t.Root == table.TypeFloat || t.Root == table.TypeDouble)
		out = append(out, Column{Name: a.Name, Type: t})
		spec.value = append(spec.value,
			subtask.Column{Name: fmt.Sprintf("a%d", i), Type: t},
			subtask.Column{Name: fmt.Sprintf("n%d", i), Type: table.BigInt()})
	}
	return out, nil
}

// aggOp is one subtask of a group aggregate. Its state row per group is
// [rows, a0, n0, a1, n1, ...]: the group's row count, and per aggregate a
// value (sum or extreme) and the count of non-NULL inputs.
type aggOp struct {
	spec  *aggSpec
	state *subtask.ValueState
	kb    *keyBatch
	// of and first are the batch's groups (see subtask.ValueState.Groups).
	of, first []int
	vals      []Row
	acc       []Row
	// results holds the output rows, which the next operators read and let
	// go.
	results rowArena
}

func (o *aggOp) Open(ctx *OperatorContext) error {
	var err error
	o.state, err = ctx.Store.Value(subtask.Layout{Name: "agg", Key: o.spec.keyCols, Value: o.spec.value})
	o.kb = newKeyBatch(o.spec.key)
	return err
}

func (o *aggOp) Process(_ int, recs []Record, out Emitter) error {
	keys, err := o.kb.of(recs)
	if err != nil {
		return err
	}
	if o.vals, err = o.state.GetBatch(keys, o.vals); err != nil {
		return err
	}
	o.of, o.first = o.state.Groups(o.of, o.first)
	o.acc = o.acc[:0]
	for _, first := range o.first {
		o.acc = append(o.acc, o.initial(o.vals[first]))
	}
	for i, r := range recs {
		if err := o.apply(o.acc[o.of[i]], r); err != nil {
			return err
		}
	}
	for g, first := range o.first {
		before, acc := o.vals[first], o.acc[g]
		row := recs[first].Row
		if acc[0].Int() == 0 {
			o.state.DeleteAt(first)
		} else {
			o.state.PutAt(first, acc)
		}
		switch {
		case before == nil && acc[0].Int() > 0:
			out.Emit(Insert, o.result(row, acc))
		case before != nil && acc[0].Int() == 0:
			out.Emit(Delete, o.result(row, before))
		case before != nil:
			old, cur := o.result(row, before), o.result(row, acc)
			if !old.Equal(cur) {
				out.Emit(UpdateBefore, old)
				out.Emit(UpdateAfter, cur)
			}
		}
	}
	return nil
}

// initial returns a fresh accumulator row holding a group's state.
func (o *aggOp) initial(state Row) Row {
	acc := make(Row, len(o.spec.value))
	if state != nil {
		copy(acc, state)
		return acc
	}
	acc[0] = subtask.Int(0)
	for i := range o.spec.aggs {
		acc[2+2*i] = subtask.Int(0)
	}
	return acc
}

func (o *aggOp) apply(acc Row, r Record) error {
	sign := int64(1)
	if !r.Kind.Adds() {
		sign = -1
	}
	acc[0] = subtask.Int(acc[0].Int() + sign)
	if acc[0].Int() < 0 {
		return fmt.Errorf("aggregate %q: retraction of a row the group does not hold", o.spec.name)
	}
	for i, a := range o.spec.aggs {
		v, n := &acc[1+2*i], &acc[2+2*i]
		if a.Kind == AggCount {
			*n = subtask.Int(n.Int() + sign)
			continue
		}
		in := r.Row[a.Col]
		if in.IsNull() {
			continue
		}
		*n = subtask.Int(n.Int() + sign)
		first := n.Int() == 1 && sign > 0
		fl := o.spec.float[i]
		switch a.Kind {
		case AggSum, AggAvg:
			switch {
			case first:
				*v = in
			case fl:
				*v = subtask.Float(v.Float() + float64(sign)*in.Float())
			default:
				*v = subtask.Int(v.Int() + sign*in.Int())
			}
		case AggMin, AggMax:
			if sign < 0 {
				return fmt.Errorf("aggregate %q: %s takes no retractions", o.spec.name, a.Kind)
			}
			if first || better(a.Kind == AggMax, fl, in, *v) {
				*v = in
			}
		}
		if n.Int() == 0 {
			*v = subtask.Null
		}
	}
	return nil
}

// better reports whether x beats the kept extreme y.
func better(isMax, fl bool, x, y Datum) bool {
	if fl {
		if isMax {
			return x.Float() > y.Float()
		}
		return x.Float() < y.Float()
	}
	if isMax {
		return x.Int() > y.Int()
	}
	return x.Int() < y.Int()
}

// result is a group's output row: its key columns, taken from one of its
// input rows, and its aggregates.
func (o *aggOp) result(row Row, acc Row) Row {
	out := o.results.take(len(o.spec.key.cols) + len(o.spec.aggs))[:0]
	for _, c := range o.spec.key.cols {
		out = append(out, row[c])
	}
	for i, a := range o.spec.aggs {
		v, n := acc[1+2*i], acc[2+2*i].Int()
		switch {
		case a.Kind == AggCount:
			out = append(out, subtask.Int(n))
		case n == 0:
			out = append(out, subtask.Null)
		case a.Kind == AggAvg && o.spec.float[i]:
			out = append(out, subtask.Float(v.Float()/float64(n)))
		case a.Kind == AggAvg:
			out = append(out, subtask.Int(v.Int()/n))
		default:
			out = append(out, v)
		}
	}
	return out
}
