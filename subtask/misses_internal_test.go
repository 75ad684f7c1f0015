package subtask

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Sorting misses by head and then key orders them as their keys' bytes, also
// for keys shorter than a head, keys ending in zero bytes and keys equal in
// their first eight bytes.
func TestSortMissesOrdersByKeyBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0x00, 0x01, 0x7F, 0x80, 0xFF}
	var ms []valueMiss
	for i := range 2000 {
		k := make([]byte, r.IntN(12))
		for j := range k {
			k[j] = alphabet[r.IntN(len(alphabet))]
		}
		ms = append(ms, newMiss(k, i))
	}
	sortMisses(ms)
	if !slices.IsSortedFunc(ms, func(a, b valueMiss) int { return strings.Compare(a.key, b.key) }) {
		t.Fatal("misses not in key order")
	}
}
