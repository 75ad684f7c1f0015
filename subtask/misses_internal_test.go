package subtask

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Sorting misses by head and then key, or by their prefixes' bytes when
// many, orders them as their keys' bytes, also for keys shorter than a
// head, keys ending in zero bytes and keys equal in their first eight bytes;
// each miss keeps its index.
func TestSortMissesOrdersByKeyBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0x00, 0x01, 0x7F, 0x80, 0xFF}
	for _, n := range []int{radixMin - 1, 2000} {
		var ms []valueMiss
		var keys []string
		for i := range n {
			k := make([]byte, r.IntN(20))
			for j := range k {
				k[j] = alphabet[r.IntN(len(alphabet))]
			}
			ms = append(ms, newMiss(k, i))
			keys = append(keys, string(k))
		}
		sortMisses(ms)
		if !slices.IsSortedFunc(ms, func(a, b valueMiss) int { return strings.Compare(a.key, b.key) }) {
			t.Fatalf("%d misses not in key order", n)
		}
		for _, m := range ms {
			if keys[m.idx] != m.key || m.head != keyHead(m.key) {
				t.Fatalf("%d misses: miss of key %q has index %d, of key %q", n, m.key, m.idx, keys[m.idx])
			}
		}
	}
}
