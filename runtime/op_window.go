package runtime

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// Window assigns a row to the event-time windows [s, s+Size) that contain
// its time, with s a multiple of Slide (windows are aligned to the epoch, as
// Flink aligns them with no offset). Times are milliseconds.
type Window struct {
	// Time is the column holding the row's event time.
	Time int
	Size int64
	// Slide is the hop between window starts; Size/Slide windows hold each
	// time. Slide equal to Size gives tumbling windows.
	Slide int64
}

// Tumble is tumbling windows of size ms over the time column.
func Tumble(timeCol int, size int64) Window { return Window{Time: timeCol, Size: size, Slide: size} }

// Hop is hopping windows of size ms, one starting every slide ms.
func Hop(timeCol int, size, slide int64) Window {
	return Window{Time: timeCol, Size: size, Slide: slide}
}

// ends calls fn with the end of every window that holds time t, latest
// first.
func (w Window) ends(t int64, fn func(end int64)) {
	for s := floorTo(t, w.Slide); s > t-w.Size; s -= w.Slide {
		fn(s + w.Size)
	}
}

// floorTo rounds t down to a multiple of m.
func floorTo(t, m int64) int64 {
	r := t % m
	if r < 0 {
		r += m
	}
	return t - r
}

// WindowAggregate groups an insert-only stream by the key columns and the
// event-time windows of w, and computes aggs per (key, window). A window's
// row is emitted once, as an insert, when the watermark passes the window's
// end: the key columns, window_start, window_end, then one column per
// aggregate. Rows of a window that already fired are late and dropped.
//
// The accumulators live in a time store, per key ordered by window end, so
// firing is a range scan up to the watermark.
func WindowAggregate(name string, in Stream, w Window, keys []int, aggs ...Agg) Stream {
	switch {
	case w.Size <= 0 || w.Slide <= 0 || w.Size%w.Slide != 0:
		in.g.fail("window aggregate %q: window size %d is not a positive multiple of slide %d", name, w.Size, w.Slide)
		return in
	case w.Time < 0 || w.Time >= len(in.schema):
		in.g.fail("window aggregate %q: time column %d outside the %d columns of the input", name, w.Time, len(in.schema))
		return in
	}
	spec, out, err := newWindowAggSpec(name, in.schema, keys, aggs)
	if err != nil {
		in.g.fail("window aggregate %q: %v", name, err)
		return in
	}
	return Apply(name, []Stream{in}, [][]int{keys}, out, func() Operator { return &windowOp{spec: spec, window: w} })
}

// newWindowAggSpec checks the aggregates and returns their accumulator
// layout and the output schema: keys, window_start, window_end, aggregates.
func newWindowAggSpec(name string, in Schema, keys []int, aggs []Agg) (*aggSpec, Schema, error) {
	spec := &aggSpec{name: name, aggs: aggs}
	var err error
	if spec.key, err = newKeySpec(in, keys); err != nil {
		return nil, nil, err
	}
	out := make(Schema, 0, len(keys)+2+len(aggs))
	for _, k := range keys {
		c := in[k]
		c.Type.Nullable = false
		out = append(out, c)
	}
	out = append(out, Column{Name: "window_start", Type: table.BigInt()}, Column{Name: "window_end", Type: table.BigInt()})
	out[len(keys)].Type.Nullable, out[len(keys)+1].Type.Nullable = false, false
	accs, err := spec.accumulators(in)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, accs...)
	spec.keyCols = columns("k", in, keys, true)
	return spec, out, nil
}

// windowOp is one subtask of a window aggregate. Its time store holds per
// key one row per open window, at time = window end, seq 0: the
// accumulators of aggOp. fired is the watermark it fired windows up to:
// windows ending at or before fired+1 are gone.
type windowOp struct {
	spec   *aggSpec
	window Window
	agg    aggOp // the accumulator arithmetic
	state  *subtask.TimeState
	keys   *distinctKeys
	fired  int64
	// nextEnd is the earliest window end that may still be open; the
	// watermark fires nothing before it reaches nextEnd-1.
	nextEnd int64
	open    [][]windowAcc // per group of the batch, its windows
	// out computes output rows from a fired window's key and accumulators.
	out aggOp
}

type windowAcc struct {
	end   int64
	acc   Row
	dirty bool
}

func (o *windowOp) Open(ctx *OperatorContext) error {
	o.agg = aggOp{spec: o.spec}
	keyCols := make([]int, len(o.spec.key.cols))
	for i := range keyCols {
		keyCols[i] = i
	}
	o.out = aggOp{spec: &aggSpec{name: o.spec.name, key: keySpec{cols: keyCols}, aggs: o.spec.aggs, float: o.spec.float}}
	o.keys = newDistinctKeys(o.spec.key)
	o.fired, o.nextEnd = math.MinInt64, math.MinInt64
	var err error
	o.state, err = ctx.Store.Time(subtask.Layout{Name: "window", Key: o.spec.keyCols, Value: o.spec.value})
	if err != nil {
		return err
	}
	// After a restore, rows at or below the old subtasks' watermark are
	// late as they were before; at a barrier every subtask fed by the same
	// sources holds the same watermark, and the minimum is the safe choice
	// when they differ.
	for i, b := range ctx.Restored {
		if len(b) != 8 {
			return fmt.Errorf("restore of checkpoint %d: window watermark of old subtask %d: %d bytes, want 8", ctx.RestoredID, i, len(b))
		}
		wm := int64(binary.BigEndian.Uint64(b))
		if i == 0 || wm < o.fired {
			o.fired = wm
		}
	}
	return nil
}

// Snapshot keeps the fired watermark with the checkpoint.
func (o *windowOp) Snapshot(int64) ([][]byte, error) {
	return [][]byte{binary.BigEndian.AppendUint64(nil, uint64(o.fired))}, nil
}

func (o *windowOp) Process(_ int, recs []Record, _ Emitter) error {
	keys, of, err := o.keys.of(recs)
	if err != nil {
		return err
	}
	for i := range o.open {
		o.open[i] = o.open[i][:0]
	}
	for len(o.open) < len(keys) {
		o.open = append(o.open, nil)
	}
	loaded := make([]bool, len(keys))
	for i, r := range recs {
		if r.Kind != Insert {
			return fmt.Errorf("window aggregate %q: %s record; window input must be insert-only", o.spec.name, r.Kind)
		}
		g := int(of[i])
		if !loaded[g] {
			loaded[g] = true
			if err := o.load(keys[g], g); err != nil {
				return err
			}
		}
		t := r.Row[o.window.Time].Int()
		var applyErr error
		o.window.ends(t, func(end int64) {
			if end-1 <= o.fired || applyErr != nil {
				return // late: the window fired
			}
			wa := o.find(g, end)
			wa.dirty = true
			applyErr = o.agg.apply(wa.acc, r)
		})
		if applyErr != nil {
			return applyErr
		}
	}
	for g, key := range keys {
		for _, wa := range o.open[g] {
			if wa.dirty {
				o.state.Put(key, wa.end, 0, wa.acc)
			}
		}
	}
	return nil
}

// load reads the open windows of key into group g.
func (o *windowOp) load(key subtask.Key, g int) error {
	// hi stops short of MaxInt64: Range's open upper end slices its key
	// prefix past a shortened end key (subtask/timestate.go).
	return o.state.Range(key, math.MinInt64, math.MaxInt64-1, func(r subtask.TimeRow) bool {
		o.open[g] = append(o.open[g], windowAcc{end: r.Time, acc: o.agg.initial(r.Value)})
		return true
	})
}

// find returns group g's window ending at end, opening it if needed.
func (o *windowOp) find(g int, end int64) *windowAcc {
	for i := range o.open[g] {
		if o.open[g][i].end == end {
			return &o.open[g][i]
		}
	}
	o.open[g] = append(o.open[g], windowAcc{end: end, acc: o.agg.initial(nil)})
	o.nextEnd = min(o.nextEnd, end)
	return &o.open[g][len(o.open[g])-1]
}

// Watermark fires every window that ends at or before wm+1: no row of it
// can come any more.
func (o *windowOp) Watermark(wm int64, out Emitter) error {
	if wm <= o.fired {
		return nil
	}
	o.fired = wm
	bound := wm + 1
	if wm == math.MaxInt64 {
		bound = wm
	}
	if o.nextEnd != math.MinInt64 && bound < o.nextEnd {
		return nil
	}
	type firing struct {
		key subtask.Key
		row subtask.TimeRow
	}
	var due []firing
	err := o.state.Scan(math.MinInt64, bound, func(k subtask.Key, r subtask.TimeRow) bool {
		k.Cols = slices.Clone(k.Cols)
		due = append(due, firing{key: k, row: r})
		return true
	})
	if err != nil {
		return err
	}
	// Emit window by window; within a window in the store's key order.
	slices.SortStableFunc(due, func(a, b firing) int { return cmp.Compare(a.row.Time, b.row.Time) })
	for _, f := range due {
		o.state.Delete(f.key, f.row.Time, f.row.Seq)
		out.Emit(Insert, o.result(f.key.Cols, f.row.Time, f.row.Value))
	}
	// Windows end on multiples of the slide: nothing more is due before the
	// next one past the bound.
	o.nextEnd = math.MaxInt64
	if bound < math.MaxInt64-o.window.Slide {
		o.nextEnd = floorTo(bound, o.window.Slide) + o.window.Slide
	}
	return nil
}

// result is a fired window's output row.
func (o *windowOp) result(key Row, end int64, acc Row) Row {
	r := o.out.result(key, acc)
	out := make(Row, 0, len(r)+2)
	out = append(out, r[:len(key)]...)
	out = append(out, subtask.Int(end-o.window.Size), subtask.Int(end))
	return append(out, r[len(key):]...)
}
