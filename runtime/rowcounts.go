package runtime

import (
	"bytes"
	"fmt"
	"hash/maphash"
)

// rowCounts is a multiset of encoded rows with signed counts, kept in
// memory the collector has next to nothing to do with: the encodings lie in
// large byte chunks, a slot says where one is and holds its count, and the
// index finds a row's slot from a hash of its encoding. Nothing of it but
// the chunk list holds a pointer, so a table of millions of rows is a few
// hundred objects, none of which is scanned.
//
// A chunk is the multiset's own (add copies an encoding into it) or one it
// adopted (addAdopted names an encoding where it lies, in bytes that never
// change): a committed transaction's part, whose new rows then cost no copy.
// A row whose count returns to zero gives its slot back; its bytes, like an
// adopted chunk's bytes no row names, stay until the garbage outweighs the
// live rows and the chunks are rewritten (compact).
type rowCounts struct {
	hash func(key []byte) uint64
	// index is an open-addressing table, linear probing, a power of two
	// long and at most half full: an entry is the low 32 bits of its row's
	// hash (which also pick its home position) over the number of its slot
	// plus one; zero is an empty entry. One probe is mostly one cache line,
	// where a Go map of the hash took two or three misses per row.
	index  []uint64
	held   int // entries in index
	slots  []countSlot
	free   []int32
	chunks [][]byte
	// live and garbage are the bytes of the encodings held and given up.
	live, garbage int
}

// countSlot is one row: its encoding, at off in chunk, of n bytes, and its
// count (zero for a free slot).
type countSlot struct {
	chunk, off, n int32
	count         int64
}

// countChunk is the size of a chunk of encodings; a longer encoding gets a
// chunk of its own.
const countChunk = 1 << 20

func newRowCounts() *rowCounts {
	seed := maphash.MakeSeed()
	return &rowCounts{hash: func(key []byte) uint64 { return maphash.Bytes(seed, key) }}
}

func (c *rowCounts) key(s *countSlot) []byte {
	return c.chunks[s.chunk][s.off : s.off+s.n]
}

// add adds d to the count of the row encoded as key, which the multiset
// does not keep: a new row's encoding is copied.
func (c *rowCounts) add(key []byte, d int64) {
	if at, h, found := c.find(key); found {
		c.change(at, d, len(key))
	} else {
		chunk, off := c.place(key)
		c.insert(at, h, countSlot{chunk: chunk, off: off, n: int32(len(key)), count: d})
	}
}

// adopt takes b as a chunk of the multiset, all of it garbage until rows
// name it through addAdopted, and returns its number. Nothing may change b
// afterwards. Until compact, chunk numbers stay as they are.
func (c *rowCounts) adopt(b []byte) int32 {
	c.chunks = append(c.chunks, b[:len(b):len(b)])
	c.garbage += len(b)
	return int32(len(c.chunks) - 1)
}

// addAdopted adds d to the count of the row encoded at off in the adopted
// chunk, the last one; a new row's slot names the encoding there. It
// reports whether the row is new.
func (c *rowCounts) addAdopted(chunk int32, off, n int, d int64) bool {
	key := c.chunks[chunk][off : off+n]
	if at, h, found := c.find(key); found {
		c.change(at, d, n)
		return false
	} else {
		c.insert(at, h, countSlot{chunk: chunk, off: int32(off), n: int32(n), count: d})
		c.garbage -= n
		return true
	}
}

// unadopt gives back the last chunk, adopted and named by no row.
func (c *rowCounts) unadopt(chunk int32) {
	if int(chunk) != len(c.chunks)-1 {
		panic(fmt.Sprintf("runtime: rowCounts gives back chunk %d of %d", chunk, len(c.chunks)))
	}
	c.garbage -= len(c.chunks[chunk])
	c.chunks[chunk] = nil
	c.chunks = c.chunks[:chunk]
}

// find returns the index position of the row encoded as key, or the empty
// position where it goes, and the hash that positions it.
func (c *rowCounts) find(key []byte) (at int, h uint32, found bool) {
	if c.held >= len(c.index)/2 {
		c.grow()
	}
	h = uint32(c.hash(key))
	mask := len(c.index) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := c.index[i]
		if e == 0 {
			return i, h, false
		}
		if uint32(e>>32) == h && bytes.Equal(c.key(&c.slots[uint32(e)-1]), key) {
			return i, h, true
		}
	}
}

// insert takes a slot for a new row and enters it at the empty index
// position at.
func (c *rowCounts) insert(at int, h uint32, slot countSlot) {
	var s int32
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		c.slots[s] = slot
	} else {
		s = int32(len(c.slots))
		c.slots = append(c.slots, slot)
	}
	c.index[at] = uint64(h)<<32 | uint64(uint32(s)+1)
	c.held++
	c.live += int(slot.n)
}

// change adds d to the count of the row entered at index position at, of
// n bytes; a row whose count reaches zero leaves.
func (c *rowCounts) change(at int, d int64, n int) {
	s := uint32(c.index[at]) - 1
	slot := &c.slots[s]
	slot.count += d
	if slot.count != 0 {
		return
	}
	c.unindex(at)
	c.live -= n
	c.garbage += n
	c.free = append(c.free, int32(s))
}

// unindex empties index position at and moves later entries of its probe
// run back, so that every lookup still reaches its entry before an empty
// position (deletion without tombstones).
func (c *rowCounts) unindex(at int) {
	mask := len(c.index) - 1
	for hole, i := at, at; ; {
		c.index[hole] = 0
		for {
			i = (i + 1) & mask
			e := c.index[i]
			if e == 0 {
				c.held--
				return
			}
			// The entry at i may fill the hole unless its home lies
			// cyclically in (hole, i].
			if home := int(uint32(e>>32)) & mask; (i-home)&mask >= (i-hole)&mask {
				c.index[hole] = e
				hole = i
				break
			}
		}
	}
}

// grow doubles the index (or makes its first) and enters every row again.
func (c *rowCounts) grow() {
	old := c.index
	c.index = make([]uint64, max(2*len(old), 1024))
	mask := len(c.index) - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := int(uint32(e>>32)) & mask
		for c.index[i] != 0 {
			i = (i + 1) & mask
		}
		c.index[i] = e
	}
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

// compact rewrites the chunks once the garbage outweighs the live rows:
// the live encodings go into fresh chunks of the multiset's own, and the
// garbage (with every adopted chunk) is left behind. It renumbers the
// chunks.
func (c *rowCounts) compact() {
	if c.garbage <= countChunk || c.garbage <= c.live {
		return
	}
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
