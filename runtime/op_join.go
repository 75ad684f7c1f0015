package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// JoinInput describes one side of a join.
type JoinInput struct {
	// Key is the join key columns; the two sides' keys pair up by position
	// and must have the same types.
	Key []int
	// Unique, if set, is columns that tell the side's rows apart (a primary
	// key): the side's state is keyed by them. Otherwise by the whole row.
	Unique []int
}

// JoinColumn picks one column of the joined row.
type JoinColumn struct {
	Right bool
	Col   int
}

// JoinSpec configures an inner join.
type JoinSpec struct {
	Left, Right JoinInput
	// Where, if set, filters the joined pairs (a post-join predicate).
	Where func(left, right Row) bool
	// Select lists the output columns; nil means every left column, then
	// every right column.
	Select []JoinColumn
}

// Join is a regular (unbounded) inner join of two updating inputs on equal
// keys: every pair of a left and a right row with the same key and passing
// Where yields an output row. An input row that adds (+I, +U) is stored and
// joins the other side's stored rows as +I; one that retracts (-U, -D) is
// removed and joins as -D, so the output retracts what that row produced.
// Each side lives in a map store, per join key. A side with Unique columns
// holds one row per value of them, as Flink's join does for an input with a
// unique key: an add replaces the row held, a retraction removes it. A side
// without holds its rows whole, each with a count of duplicates.
func Join(name string, left, right Stream, spec JoinSpec) Stream {
	g := left.g
	sides := [2]*joinSide{}
	for s, in := range [2]struct {
		stream Stream
		input  JoinInput
	}{{left, spec.Left}, {right, spec.Right}} {
		side, err := newJoinSide(s, in.stream.schema, in.input)
		if err != nil {
			g.fail("join %q: %s input: %v", name, [2]string{"left", "right"}[s], err)
			return left
		}
		sides[s] = side
	}
	if len(spec.Left.Key) != len(spec.Right.Key) {
		g.fail("join %q: %d left key columns, %d right", name, len(spec.Left.Key), len(spec.Right.Key))
		return left
	}
	for i := range spec.Left.Key {
		lt, rt := sides[0].key.types[i], sides[1].key.types[i]
		if lt.Root != rt.Root {
			g.fail("join %q: key column %d is %s on the left, %s on the right", name, i, lt, rt)
			return left
		}
	}
	sel := spec.Select
	if sel == nil {
		for c := range left.schema {
			sel = append(sel, JoinColumn{Col: c})
		}
		for c := range right.schema {
			sel = append(sel, JoinColumn{Right: true, Col: c})
		}
	}
	schema := make(Schema, len(sel))
	for i, jc := range sel {
		from := left.schema
		if jc.Right {
			from = right.schema
		}
		if jc.Col < 0 || jc.Col >= len(from) {
			g.fail("join %q: selected column %d outside its input's %d columns", name, jc.Col, len(from))
			return left
		}
		schema[i] = from[jc.Col]
	}
	j := &joinSpec{name: name, sides: sides, where: spec.Where, width: len(sel), spans: joinSpans(sel)}
	return Apply(name, []Stream{left, right}, [][]int{spec.Left.Key, spec.Right.Key}, schema,
		func() Operator { return &joinOp{spec: j} })
}

type joinSpec struct {
	name  string
	sides [2]*joinSide
	where func(l, r Row) bool
	// width is the number of output columns, spans the selection as runs
	// of consecutive columns of one side.
	width int
	spans []joinSpan
}

// joinSpan is n consecutive columns of one side, from column col on,
// placed in the output from column at on.
type joinSpan struct {
	right      bool
	col, n, at int
}

// joinSpans gathers a selection into runs, so that an output row is built
// by a few copies rather than a column at a time.
func joinSpans(sel []JoinColumn) []joinSpan {
	var spans []joinSpan
	for i, jc := range sel {
		if k := len(spans) - 1; k >= 0 && spans[k].right == jc.Right && spans[k].col+spans[k].n == jc.Col {
			spans[k].n++
			continue
		}
		spans = append(spans, joinSpan{right: jc.Right, col: jc.Col, n: 1, at: i})
	}
	return spans
}

// joinSide is one input's state layout. With Unique columns an entry is
// [unique cols] → [row]; without, [row] → [count].
type joinSide struct {
	key    keySpec
	sub    []int
	unique bool
	// subSpan: the entry key columns are consecutive and ascending, so an
	// entry key is a slice of its row.
	subSpan bool
	width   int
	layout  subtask.Layout
}

func newJoinSide(s int, schema Schema, in JoinInput) (*joinSide, error) {
	key, err := newKeySpec(schema, in.Key)
	if err != nil {
		return nil, err
	}
	side := &joinSide{key: key, sub: in.Unique, unique: in.Unique != nil, width: len(schema)}
	if !side.unique {
		side.sub = allColumns(len(schema))
	}
	if _, err := newKeySpec(schema, side.sub); err != nil {
		return nil, fmt.Errorf("unique columns: %w", err)
	}
	side.subSpan = consecutive(side.sub)
	value := []subtask.Column{{Name: "count", Type: table.BigInt()}}
	if side.unique {
		value = columns("v", schema, allColumns(len(schema)), false)
	}
	side.layout = subtask.Layout{
		Name:  [2]string{"left", "right"}[s],
		Key:   columns("k", schema, in.Key, true),
		Sub:   columns("u", schema, side.sub, true),
		Value: value,
	}
	return side, nil
}

// lookup returns the entry key of a row for reading or deleting its entry:
// a slice of the row, or the row's columns gathered into scratch. The state
// must not keep it.
func (s *joinSide) lookup(r Row, scratch *Row) Row {
	if s.subSpan {
		return r[s.sub[0] : s.sub[0]+len(s.sub) : s.sub[0]+len(s.sub)]
	}
	*scratch = (*scratch)[:0]
	for _, c := range s.sub {
		*scratch = append(*scratch, r[c])
	}
	return *scratch
}

// entry builds the entry key and value of a row for the state to keep. A
// side with Unique columns keeps the row itself as the value (rows are
// immutable once emitted), its entry key a slice of it or a copy of its
// unique columns from the arena. A side without keeps a copy of the row from
// the arena as the entry key: its rows are few, and the row upstream owns
// may share its chunk with many that would otherwise die (a projection's)
// for as long as the entry lives.
func (s *joinSide) entry(r Row, count int64, rows *rowArena) (sub, value Row) {
	if !s.unique {
		sub = rows.take(len(r))
		copy(sub, r)
		return sub, countRow(count)
	}
	if s.subSpan {
		at, n := s.sub[0], len(s.sub)
		return r[at : at+n : at+n], r
	}
	sub = rows.take(len(s.sub))
	for i, c := range s.sub {
		sub[i] = r[c]
	}
	return sub, r
}

// countRows are the shared value rows of small counts: a row stored without
// Unique columns is mostly held once.
var countRows = func() []Row {
	rows := make([]Row, 16)
	for i := range rows {
		rows[i] = Row{subtask.Int(int64(i))}
	}
	return rows
}()

func countRow(n int64) Row {
	if n >= 0 && n < int64(len(countRows)) {
		return countRows[n]
	}
	return Row{subtask.Int(n)}
}

// row returns the stored row of an entry and its count.
func (s *joinSide) row(sub, value Row) (Row, int64) {
	if s.unique {
		return value, 1
	}
	return sub, value[0].Int()
}

type joinOp struct {
	spec    *joinSpec
	states  [2]*subtask.MapState
	keys    [2]*distinctKeys
	entries [2][]*subtask.MapEntries
	// stored holds the rows the state keeps; scratch is the entry key of a
	// lookup. Output rows come from their own chunks: the next operators
	// read them and let go (an aggregate, a sink's encoding), and one that
	// keeps a sparse few (a top-N) copies those.
	stored  rowArena
	joined  rowArena
	scratch Row
	probe   joinProbe
}

func (o *joinOp) Open(ctx *OperatorContext) error {
	for s, side := range o.spec.sides {
		st, err := ctx.Store.Map(side.layout)
		if err != nil {
			return err
		}
		o.states[s], o.keys[s] = st, newDistinctKeys(side.key)
	}
	return nil
}

func (o *joinOp) Process(input int, recs []Record, out Emitter) error {
	own, other := input, 1-input
	keys, of, err := o.keys[own].of(recs)
	if err != nil {
		return err
	}
	if o.entries[own], err = o.states[own].GetBatch(keys, o.entries[own]); err != nil {
		return err
	}
	if o.entries[other], err = o.states[other].GetBatch(keys, o.entries[other]); err != nil {
		return err
	}
	side, otherSide := o.spec.sides[own], o.spec.sides[other]
	for i, r := range recs {
		mine, theirs := o.entries[own][of[i]], o.entries[other][of[i]]
		kind, err := o.store(side, mine, r)
		if err != nil {
			return err
		}
		if theirs.Len() == 0 {
			continue
		}
		o.probe = joinProbe{row: r.Row, input: input, side: otherSide, kind: kind, out: out}
		for i := range theirs.Len() {
			if !o.join(theirs.At(i)) {
				break
			}
		}
	}
	o.probe = joinProbe{}
	return nil
}

// store applies a record to its side's entries of its key, and returns the
// kind of the rows it joins as.
func (o *joinOp) store(side *joinSide, mine *subtask.MapEntries, r Record) (Change, error) {
	adds := r.Kind.Adds()
	if side.unique {
		// The row of the unique columns is replaced or removed whatever it
		// was: no read of it first.
		if adds {
			mine.Put(side.entry(r.Row, 1, &o.stored))
			return Insert, nil
		}
		if !mine.Delete(side.lookup(r.Row, &o.scratch)) {
			return 0, o.notHeld(side)
		}
		return Delete, nil
	}
	sub := side.lookup(r.Row, &o.scratch)
	var count int64
	if v, ok := mine.Get(sub); ok {
		_, count = side.row(sub, v)
	}
	kind := Insert
	if adds {
		count++
	} else {
		if count == 0 {
			return 0, o.notHeld(side)
		}
		count--
		kind = Delete
	}
	if count == 0 {
		mine.Delete(sub)
	} else {
		mine.Put(side.entry(r.Row, count, &o.stored))
	}
	return kind, nil
}

func (o *joinOp) notHeld(side *joinSide) error {
	return fmt.Errorf("join %q: retraction of a row the %s side does not hold", o.spec.name, side.layout.Name)
}

// joinProbe is the record whose matches a scan of the other side's entries
// emits; it is a field of the operator so that a scan allocates nothing.
type joinProbe struct {
	row   Row
	input int
	side  *joinSide // the other side
	kind  Change
	out   Emitter
}

// join joins the probe record with one entry of the other side.
func (o *joinOp) join(sub, value Row) bool {
	p := &o.probe
	orow, n := p.side.row(sub, value)
	l, r := p.row, orow
	if p.input == 1 {
		l, r = orow, p.row
	}
	if o.spec.where != nil && !o.spec.where(l, r) {
		return true
	}
	joined := o.project(l, r)
	for range n {
		p.out.Emit(p.kind, joined)
	}
	return true
}

func (o *joinOp) project(l, r Row) Row {
	out := o.joined.take(o.spec.width)
	for _, s := range o.spec.spans {
		from := l
		if s.right {
			from = r
		}
		copy(out[s.at:s.at+s.n], from[s.col:s.col+s.n])
	}
	return out
}
