package runtime

// sliceArena hands out fresh slices carved from shared chunks, so that
// building the rows (or lists) of a batch costs one allocation per chunk
// instead of one per slice. A slot is handed out once and never reused:
// rows stay immutable and valid for as long as anyone holds them (a chunk
// lives while any of its slices does). Every slice has its capacity clipped
// to its length, so appending to one copies it rather than writing into a
// neighbour.
type sliceArena[T any] struct {
	free []T
}

// rowArena hands out rows.
type rowArena = sliceArena[Datum]

// arenaChunk is the elements per chunk: big enough to spread the cost of an
// allocation over dozens of slices, small enough that a few long-lived rows
// keep little else alive.
const arenaChunk = 512

// take returns a zeroed slice of n elements that no one else holds.
func (a *sliceArena[T]) take(n int) []T {
	if n > arenaChunk/8 {
		return make([]T, n)
	}
	if len(a.free) < n {
		a.free = make([]T, arenaChunk)
	}
	s := a.free[:n:n]
	a.free = a.free[n:]
	return s
}

// clone returns a copy of s that no one else holds.
func (a *sliceArena[T]) clone(s []T) []T {
	c := a.take(len(s))
	copy(c, s)
	return c
}
