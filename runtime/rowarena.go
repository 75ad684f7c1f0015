package runtime

// rowArena hands out fresh rows carved from shared chunks, so that building
// the rows of a batch costs one allocation per chunk instead of one per row.
// A slot is handed out once and never reused: rows stay immutable and valid
// for as long as anyone holds them. Every row has its capacity clipped to
// its length, so appending to one copies it rather than writing into a
// neighbour.
//
// A chunk lives while any of its rows does, so an arena suits rows that die
// together (projections that the next operator copies) or that mostly live
// on together (a join's stored entries), not rows of which a holder keeps a
// sparse few for long (a top-N's winners, a sink table's current rows).
type rowArena struct {
	free []Datum
}

// arenaChunk is the datums per chunk: big enough to spread the cost of an
// allocation over dozens of rows, small enough that a few long-lived rows
// keep little else alive.
const arenaChunk = 512

// take returns a zeroed row of n datums that no one else holds.
func (a *rowArena) take(n int) Row {
	if n > arenaChunk/8 {
		return make(Row, n)
	}
	if len(a.free) < n {
		a.free = make([]Datum, arenaChunk)
	}
	r := a.free[:n:n]
	a.free = a.free[n:]
	return r
}
