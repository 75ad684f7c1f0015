package runtime

import (
	"fmt"
	"slices"
	"sort"
	"unsafe"

	"github.com/lakestate/lakestate/subtask"
)

// TopNSpec configures a top-N operator.
type TopNSpec struct {
	// Partition is the key columns; each partition ranks its own rows.
	Partition []int
	// Less reports whether row a ranks above row b. Rows that tie keep
	// their arrival order.
	Less func(a, b Row) bool
	// N is how many rows of each partition the output holds.
	N int
	// Retractable accepts retractions on the input. The operator then keeps
	// every row of a partition, not just the top N, so that the ranking can
	// fall back when a top row is retracted; without it a retraction is an
	// error.
	Retractable bool
}

// TopN keeps the N top-ranked rows of every partition, like ROW_NUMBER() ...
// WHERE rownum <= N without the rank column: its output holds exactly the
// current top rows, and a batch that changes a partition's top retracts the
// rows that left it (-U, or -D when the top empties) and adds those that
// entered (+U, or +I when it was empty). The ranked rows live in a list
// store, one list per partition.
func TopN(name string, in Stream, spec TopNSpec) Stream {
	key, err := newKeySpec(in.schema, spec.Partition)
	switch {
	case err != nil:
		in.g.fail("top-n %q: %v", name, err)
		return in
	case spec.N < 1 || spec.Less == nil:
		in.g.fail("top-n %q: needs N >= 1 and a Less function", name)
		return in
	}
	layout := subtask.Layout{
		Name:  "ranked",
		Key:   columns("k", in.schema, spec.Partition, true),
		Value: columns("v", in.schema, allColumns(len(in.schema)), false),
	}
	return Apply(name, []Stream{in}, [][]int{spec.Partition}, in.schema, func() Operator {
		return &topNOp{name: name, spec: spec, key: key, layout: layout}
	})
}

type topNOp struct {
	name   string
	spec   TopNSpec
	key    keySpec
	layout subtask.Layout
	state  *subtask.ListState
	kb     *keyBatch
	// of and first are the batch's groups (see subtask.ListState.Groups).
	of, first []int
	lists     [][]Row
	work      [][]Row
	// matched is emitDiff's scratch.
	matched []bool
}

func (o *topNOp) Open(ctx *OperatorContext) error {
	var err error
	o.state, err = ctx.Store.List(o.layout)
	o.kb = newKeyBatch(o.key)
	return err
}

func (o *topNOp) Process(_ int, recs []Record, out Emitter) error {
	keys, err := o.kb.of(recs)
	if err != nil {
		return err
	}
	if o.lists, err = o.state.GetBatch(keys, o.lists); err != nil {
		return err
	}
	o.of, o.first = o.state.Groups(o.of, o.first)
	// A partition's list is ranked in a work list the operator reuses from
	// batch to batch; only a list that changed is copied out for the state.
	n := len(o.first)
	if cap(o.work) < n {
		o.work = slices.Grow(o.work[:cap(o.work)], n-cap(o.work))
	}
	o.work = o.work[:n]
	for g, first := range o.first {
		o.work[g] = append(o.work[g][:0], o.lists[first]...)
	}
	for i, r := range recs {
		g := o.of[i]
		if o.work[g], err = o.apply(o.work[g], r); err != nil {
			return err
		}
	}
	for g, first := range o.first {
		before, after := o.lists[first], o.work[g]
		if slices.EqualFunc(before, after, Row.Equal) {
			continue
		}
		if len(after) == 0 {
			o.state.DeleteAt(first)
		} else {
			after = o.keep(before, after)
			o.state.PutAt(first, after)
		}
		o.emitDiff(out, before[:min(o.spec.N, len(before))], after[:min(o.spec.N, len(after))])
	}
	for _, w := range o.work {
		clear(w[:cap(w)])
	}
	return nil
}

// keep returns the list to store for a partition: a copy of the work list
// in which every row that came in this batch is copied too. An input row
// may share its storage with many others (a join's output chunk), and a
// partition keeps its few rows for long.
func (o *topNOp) keep(before, after []Row) []Row {
	list := slices.Clone(after)
	for i, r := range list {
		if !holdsSame(before, r) {
			list[i] = slices.Clone(r)
		}
	}
	return list
}

// holdsSame reports whether rows holds r itself, not just an equal row.
func holdsSame(rows []Row, r Row) bool {
	for _, h := range rows {
		if len(h) == len(r) && unsafe.SliceData(h) == unsafe.SliceData(r) {
			return true
		}
	}
	return false
}

// apply adds or retracts one row in a partition's ranked list.
func (o *topNOp) apply(list []Row, r Record) ([]Row, error) {
	if r.Kind.Adds() {
		at := sort.Search(len(list), func(i int) bool { return o.spec.Less(r.Row, list[i]) })
		if !o.spec.Retractable && at >= o.spec.N {
			return list, nil
		}
		list = slices.Insert(list, at, r.Row)
		if !o.spec.Retractable && len(list) > o.spec.N {
			list = list[:o.spec.N]
		}
		return list, nil
	}
	if !o.spec.Retractable {
		return nil, fmt.Errorf("top-n %q: retraction on an input declared insert-only", o.name)
	}
	at := slices.IndexFunc(list, r.Row.Equal)
	if at < 0 {
		return nil, fmt.Errorf("top-n %q: retraction of a row the partition does not hold", o.name)
	}
	return slices.Delete(list, at, at+1), nil
}

// emitDiff retracts the rows of the old top that the new one lacks and adds
// the new top's rows the old one lacked (multisets).
func (o *topNOp) emitDiff(out Emitter, before, after []Row) {
	gone, came := Delete, Insert
	if len(before) > 0 && len(after) > 0 {
		gone, came = UpdateBefore, UpdateAfter
	}
	o.matched = append(o.matched[:0], make([]bool, len(after))...)
	matched := o.matched
	for _, b := range before {
		found := false
		for j, a := range after {
			if !matched[j] && a.Equal(b) {
				matched[j], found = true, true
				break
			}
		}
		if !found {
			out.Emit(gone, b)
		}
	}
	for j, a := range after {
		if !matched[j] {
			out.Emit(came, a)
		}
	}
}
