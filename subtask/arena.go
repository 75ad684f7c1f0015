package subtask

import "unsafe"

// arena holds a state's buffered keys: an index from encoded key to a slot,
// with freed slots reused so a key costs one allocation (its string) per
// interval and a lookup by scratch bytes allocates nothing.
type arena[S any] struct {
	index map[string]int32
	keys  []string // "" marks a free slot (no encoded key is empty)
	slots []S
	free  []int32
}

func newArena[S any]() arena[S] { return arena[S]{index: map[string]int32{}} }

func (a *arena[S]) lookup(enc []byte) (int32, bool) {
	at, ok := a.index[string(enc)]
	return at, ok
}

// add inserts a key that the arena does not hold, with a zero slot.
func (a *arena[S]) add(key string) int32 {
	var at int32
	if n := len(a.free); n > 0 {
		at, a.free = a.free[n-1], a.free[:n-1]
		a.keys[at] = key
	} else {
		at = int32(len(a.slots))
		a.slots = append(a.slots, *new(S))
		a.keys = append(a.keys, key)
	}
	a.index[key] = at
	return at
}

// drop frees a slot; dropping a free slot does nothing.
func (a *arena[S]) drop(at int32) {
	if a.keys[at] == "" {
		return
	}
	delete(a.index, a.keys[at])
	a.keys[at] = ""
	var zero S
	a.slots[at] = zero
	a.free = append(a.free, at)
}

func (a *arena[S]) live(at int32) bool { return a.keys[at] != "" }

// addMissing adds every key of older that a lacks, with older's slot: a
// newer buffer over an older one, the newer slot winning.
func (a *arena[S]) addMissing(older *arena[S]) {
	for i, key := range older.keys {
		if _, ok := a.index[key]; key != "" && !ok {
			a.slots[a.add(key)] = older.slots[i]
		}
	}
}

// swapSpare makes the spare storage (a fresh arena when there is none) the
// live buffer and leaves spare empty.
func (a *arena[S]) swapSpare(spare *arena[S]) {
	*a, *spare = *spare, arena[S]{}
	if a.index == nil {
		*a = newArena[S]()
	}
}

func (a *arena[S]) reset() {
	clear(a.index)
	clear(a.slots)
	a.slots = a.slots[:0]
	a.keys = a.keys[:0]
	a.free = a.free[:0]
}

// slotGroups numbers the groups of a batch's keys by their slots (at[i]
// is key i's; nSlots bounds them): of[i] is key i's group, first[g] the
// index of group g's first key. scratch, zero between calls, maps a slot to
// its group plus one while it runs. The results reuse of's and first's
// storage.
func slotGroups(at []int32, nSlots int, scratch *[]int32, of, first []int) ([]int, []int) {
	of, first = of[:0], first[:0]
	if len(*scratch) < nSlots {
		*scratch = append(*scratch, make([]int32, nSlots-len(*scratch))...)
	}
	groupOf := *scratch
	for i, slot := range at {
		g := groupOf[slot] - 1
		if g < 0 {
			g = int32(len(first))
			groupOf[slot] = g + 1
			first = append(first, i)
		}
		of = append(of, int(g))
	}
	for _, i := range first {
		groupOf[at[i]] = 0
	}
	return of, first
}

// strSlab carves strings out of shared chunks of bytes: a buffer's keys
// and entry keys, short and made by the thousand per batch, cost an
// allocation per chunk instead of one each, and the collector meets one
// pointer-free object where it met hundreds. Bytes handed out are never
// written again (a string is immutable); a chunk lives while any of its
// strings does, and the strings of a buffer die together, at a flush.
type strSlab struct {
	free []byte
}

// slabChunk is the bytes per chunk; longer strings get their own
// allocation, so a chunk wastes at most a sixteenth of itself at its end.
const slabChunk = 4096

// str returns a string holding b's bytes.
func (s *strSlab) str(b []byte) string {
	n := len(b)
	if n == 0 || n > slabChunk/16 {
		return string(b)
	}
	if cap(s.free)-len(s.free) < n {
		s.free = make([]byte, 0, slabChunk)
	}
	at := len(s.free)
	s.free = append(s.free, b...)
	return unsafe.String(&s.free[at], n)
}
