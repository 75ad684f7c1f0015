package runtime

import (
	"bytes"
	"hash/maphash"
)

// rowCounts is a multiset of encoded rows with signed counts, kept in
// memory the collector has next to nothing to do with: the encodings are
// appended to large byte chunks, a slot says where one is and holds its
// count, and the index maps a hash of an encoding to the first slot of
// its chain. Nothing of it but the chunk list holds a pointer, so a table
// of millions of rows is a few hundred objects, none of which is scanned.
//
// A row whose count returns to zero gives its slot back; its bytes stay
// in their chunk until the garbage outweighs the live rows and the chunks
// are rewritten.
type rowCounts struct {
	hash   func(key []byte) uint64
	index  map[uint64]int32
	slots  []countSlot
	free   []int32
	chunks [][]byte
	// live and garbage are the bytes of the encodings held and given up.
	live, garbage int
}

// countSlot is one row: its encoding, at off in chunk, of n bytes; its
// count (zero for a free slot) and the next slot of its hash chain (-1 at
// the end).
type countSlot struct {
	chunk, off, n, next int32
	count               int64
}

// countChunk is the size of a chunk of encodings; a longer encoding gets a
// chunk of its own.
const countChunk = 1 << 20

func newRowCounts() *rowCounts {
	seed := maphash.MakeSeed()
	return &rowCounts{
		hash:  func(key []byte) uint64 { return maphash.Bytes(seed, key) },
		index: map[uint64]int32{},
	}
}

func (c *rowCounts) key(s *countSlot) []byte {
	return c.chunks[s.chunk][s.off : s.off+s.n]
}

// add adds d to the count of the row encoded as key, which the multiset
// does not keep.
func (c *rowCounts) add(key []byte, d int64) {
	h := c.hash(key)
	first, ok := c.index[h]
	if !ok {
		first = -1
	}
	prev := int32(-1)
	for s := first; s >= 0; prev, s = s, c.slots[s].next {
		slot := &c.slots[s]
		if !bytes.Equal(c.key(slot), key) {
			continue
		}
		slot.count += d
		if slot.count != 0 {
			return
		}
		// The row left: unlink its slot.
		switch {
		case prev >= 0:
			c.slots[prev].next = slot.next
		case slot.next >= 0:
			c.index[h] = slot.next
		default:
			delete(c.index, h)
		}
		c.live -= len(key)
		c.garbage += len(key)
		c.free = append(c.free, s)
		if c.garbage > countChunk && c.garbage > c.live {
			c.rewrite()
		}
		return
	}
	chunk, off := c.place(key)
	slot := countSlot{chunk: chunk, off: off, n: int32(len(key)), next: first, count: d}
	var s int32
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		c.slots[s] = slot
	} else {
		s = int32(len(c.slots))
		c.slots = append(c.slots, slot)
	}
	c.index[h] = s
	c.live += len(key)
}

// place copies an encoding into the chunks and returns where it went.
func (c *rowCounts) place(key []byte) (chunk, off int32) {
	if len(key) > countChunk/4 {
		c.chunks = append(c.chunks, bytes.Clone(key))
		return int32(len(c.chunks) - 1), 0
	}
	last := len(c.chunks) - 1
	if last < 0 || len(c.chunks[last])+len(key) > cap(c.chunks[last]) || cap(c.chunks[last]) != countChunk {
		c.chunks = append(c.chunks, make([]byte, 0, countChunk))
		last++
	}
	off = int32(len(c.chunks[last]))
	c.chunks[last] = append(c.chunks[last], key...)
	return int32(last), off
}

// rewrite copies the live encodings into fresh chunks, leaving the
// garbage behind.
func (c *rowCounts) rewrite() {
	old := c.chunks
	c.chunks = nil
	for i := range c.slots {
		s := &c.slots[i]
		if s.count != 0 {
			s.chunk, s.off = c.place(old[s.chunk][s.off : s.off+s.n])
		}
	}
	c.garbage = 0
}

// each calls fn with every row held and its count, in no particular order,
// and stops at fn's first error.
func (c *rowCounts) each(fn func(key []byte, count int64) error) error {
	for i := range c.slots {
		s := &c.slots[i]
		if s.count == 0 {
			continue
		}
		if err := fn(c.key(s), s.count); err != nil {
			return err
		}
	}
	return nil
}

// len is the number of distinct rows held.
func (c *rowCounts) len() int { return len(c.slots) - len(c.free) }
