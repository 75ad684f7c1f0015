package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/subtask"
)

// DedupSpec configures a keep-last deduplication.
type DedupSpec struct {
	// Key is the columns that identify a row's entity.
	Key []int
	// Replaces reports whether row, arriving after kept, replaces it: for a
	// keep-last on event time, it is the later of the two (and on a tie
	// whatever rule makes the result independent of arrival order).
	Replaces func(row, kept Row) bool
}

// Deduplicate keeps one row per key, the last one by spec.Replaces, like
// ROW_NUMBER() OVER (PARTITION BY key ORDER BY time DESC) ... WHERE rownum = 1
// over an insert-only input. A replacement retracts the old row (-U) and
// adds the new one (+U); the kept rows live in a value store.
func Deduplicate(name string, in Stream, spec DedupSpec) Stream {
	key, err := newKeySpec(in.schema, spec.Key)
	if err != nil || spec.Replaces == nil {
		in.g.fail("deduplicate %q: needs a key and a Replaces function (%v)", name, err)
		return in
	}
	layout := subtask.Layout{
		Name:  "kept",
		Key:   columns("k", in.schema, spec.Key, true),
		Value: columns("v", in.schema, allColumns(len(in.schema)), false),
	}
	return Apply(name, []Stream{in}, [][]int{spec.Key}, in.schema, func() Operator {
		return &dedupOp{name: name, spec: spec, key: key, layout: layout}
	})
}

type dedupOp struct {
	name   string
	spec   DedupSpec
	key    keySpec
	layout subtask.Layout
	state  *subtask.ValueState
	kb     *keyBatch
	// of and first are the batch's groups (see subtask.ValueState.Groups).
	of, first []int
	kept      []Row
	cur       []Row
}

func (o *dedupOp) Open(ctx *OperatorContext) error {
	var err error
	o.state, err = ctx.Store.Value(o.layout)
	o.kb = newKeyBatch(o.key)
	return err
}

func (o *dedupOp) Process(_ int, recs []Record, out Emitter) error {
	keys, err := o.kb.of(recs)
	if err != nil {
		return err
	}
	if o.kept, err = o.state.GetBatch(keys, o.kept); err != nil {
		return err
	}
	o.of, o.first = o.state.Groups(o.of, o.first)
	o.cur = o.cur[:0]
	for _, first := range o.first {
		o.cur = append(o.cur, o.kept[first])
	}
	for i, r := range recs {
		if !r.Kind.Adds() {
			return fmt.Errorf("deduplicate %q: retraction on an insert-only input", o.name)
		}
		g := o.of[i]
		if o.cur[g] == nil || o.spec.Replaces(r.Row, o.cur[g]) {
			o.cur[g] = r.Row
		}
	}
	for g, first := range o.first {
		before, after := o.kept[first], o.cur[g]
		if before != nil && before.Equal(after) {
			continue
		}
		o.state.PutAt(first, after)
		if before == nil {
			out.Emit(Insert, after)
		} else {
			out.Emit(UpdateBefore, before)
			out.Emit(UpdateAfter, after)
		}
	}
	return nil
}
