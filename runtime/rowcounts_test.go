package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// rowCounts holds what a map of counts holds, through removals, slot
// reuse, hash chains and rewrites of its chunks: with its own hash, and
// with one under which most keys collide.
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
			rewrites := 0
			for step := range 20000 {
				k := keys[rng.IntN(len(keys))]
				d := int64(1)
				if rng.IntN(2) == 0 {
					d = -1
				}
				garbage := c.garbage
				c.add(k, d)
				if c.garbage < garbage {
					rewrites++
				}
				if model[string(k)] += d; model[string(k)] == 0 {
					delete(model, string(k))
				}
				if step%500 == 0 {
					checkRowCounts(t, c, model)
				}
			}
			checkRowCounts(t, c, model)
			if rewrites == 0 {
				t.Fatal("the chunks were never rewritten")
			}
		})
	}
}

// checkRowCounts compares c with model and checks c's invariants: every
// held slot is reachable from the index under its hash, exactly once, and
// the live bytes add up.
func checkRowCounts(t *testing.T, c *rowCounts, model map[string]int64) {
	t.Helper()
	reached := make([]bool, len(c.slots))
	for h, first := range c.index {
		for s := first; s >= 0; s = c.slots[s].next {
			slot := &c.slots[s]
			if reached[s] || slot.count == 0 || c.hash(c.key(slot)) != h {
				t.Fatalf("slot %d: reached twice, free or under another hash", s)
			}
			reached[s] = true
		}
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
	if live != c.live {
		t.Fatalf("%d live bytes, counted %d", live, c.live)
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
