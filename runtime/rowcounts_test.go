package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// rowCounts holds what a map of counts holds, through removals, slot
// reuse, probe runs, rows named in adopted chunks and rewrites of its
// chunks: with its own hash, and with one under which most keys collide.
func TestRowCountsAgreesWithAMap(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			c := newRowCounts()
			if collide {
				c.hash = func(key []byte) uint64 { return uint64(len(key) % 5) }
			}
			rng := rand.New(rand.NewPCG(1, 2))
			keys := make([][]byte, 400)
			for i := range keys {
				keys[i] = fmt.Appendf(bytes.Repeat([]byte{byte(i)}, 1+rng.IntN(4000)), "%d", i)
			}
			keys = append(keys, bytes.Repeat([]byte{'x'}, countChunk/2)) // a chunk of its own
			model := map[string]int64{}
			rewrites, adopted := 0, 0
			for step := range 20000 {
				d := int64(1)
				if rng.IntN(2) == 0 {
					d = -1
				}
				garbage := c.garbage
				if rng.IntN(4) == 0 {
					// A few keys back to back in a chunk the multiset adopts.
					var part []byte
					var picked [][]byte
					for range 1 + rng.IntN(3) {
						k := keys[rng.IntN(len(keys))]
						part = append(part, k...)
						picked = append(picked, k)
					}
					chunk, named, off := c.adopt(part), false, 0
					for _, k := range picked {
						if c.addAdopted(chunk, off, len(k), d) {
							named = true
							adopted++
						}
						off += len(k)
						if model[string(k)] += d; model[string(k)] == 0 {
							delete(model, string(k))
						}
					}
					if !named {
						c.unadopt(chunk)
					}
				} else {
					k := keys[rng.IntN(len(keys))]
					c.add(k, d)
					if model[string(k)] += d; model[string(k)] == 0 {
						delete(model, string(k))
					}
				}
				c.compact()
				if c.garbage == 0 && garbage > 0 {
					rewrites++
				}
				if step%500 == 0 {
					checkRowCounts(t, c, model)
				}
			}
			checkRowCounts(t, c, model)
			if rewrites == 0 || adopted == 0 {
				t.Fatalf("the chunks were rewritten %d times, %d rows named in adopted chunks", rewrites, adopted)
			}
		})
	}
}

// checkRowCounts compares c with model and checks c's invariants: every
// held slot has one index entry, under its hash, which a lookup from the
// hash's home position reaches before an empty entry, and the live and
// garbage bytes add up.
func checkRowCounts(t *testing.T, c *rowCounts, model map[string]int64) {
	t.Helper()
	reached := make([]bool, len(c.slots))
	mask := len(c.index) - 1
	held := 0
	for i, e := range c.index {
		if e == 0 {
			continue
		}
		held++
		s := uint32(e) - 1
		slot := &c.slots[s]
		h := uint32(c.hash(c.key(slot)))
		if reached[s] || slot.count == 0 || h != uint32(e>>32) {
			t.Fatalf("slot %d: entered twice, free or under another hash", s)
		}
		reached[s] = true
		for j := int(h) & mask; j != i; j = (j + 1) & mask {
			if c.index[j] == 0 {
				t.Fatalf("slot %d at %d: an empty entry at %d lies between it and its home %d", s, i, j, int(h)&mask)
			}
		}
	}
	if held != c.held || 2*held > len(c.index) {
		t.Fatalf("%d entries, counted %d, index of %d", held, c.held, len(c.index))
	}
	live := 0
	for s := range c.slots {
		if (c.slots[s].count != 0) != reached[s] {
			t.Fatalf("slot %d: count %d, reached %v", s, c.slots[s].count, reached[s])
		}
		if reached[s] {
			live += int(c.slots[s].n)
		}
	}
	stored := 0
	for _, ch := range c.chunks {
		stored += len(ch)
	}
	if live != c.live || stored != c.live+c.garbage {
		t.Fatalf("%d live bytes, counted %d; %d bytes in chunks, counted %d", live, c.live, stored, c.live+c.garbage)
	}
	got := map[string]int64{}
	if err := c.each(func(key []byte, count int64) error {
		got[string(key)] = count
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(model) || c.len() != len(model) {
		t.Fatalf("%d rows (len %d), want %d", len(got), c.len(), len(model))
	}
	for k, n := range model {
		if got[k] != n {
			t.Fatalf("key of %d bytes: count %d, want %d", len(k), got[k], n)
		}
	}
}
