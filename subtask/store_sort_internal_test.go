package subtask

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// scatteredValueRows are the flush rows of n value keys (a key group, two
// BIGINT key columns), allocated in random order among other objects as an
// operator's writes leave them, in no order.
func scatteredValueRows(tb testing.TB, n int) []mutation {
	l, err := newLayout(Layout{Name: "v", Kind: KindValue,
		Key:   []Column{{Name: "a", Type: table.BigInt().NotNull()}, {Name: "b", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([]mutation, n)
	var keep [][]byte
	for i := range rows {
		k := Key{Group: int32(rng.IntN(128)), Cols: Row{Int(int64(rng.IntN(n / 4))), Int(int64(i))}}
		rows[i] = mutation{key: string(l.AppendKey(nil, k)), vals: Row{Int(int64(i))}}
		keep = append(keep, make([]byte, 64+rng.IntN(512)))
	}
	_ = keep
	return rows
}

func BenchmarkSortMutations(b *testing.B) {
	rows := scatteredValueRows(b, 100_000)
	work := make([]mutation, len(rows))
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			copy(work, rows)
			slices.SortFunc(work, func(a, b mutation) int { return strings.Compare(a.key, b.key) })
		}
	})
	b.Run("prefix", func(b *testing.B) {
		for b.Loop() {
			copy(work, rows)
			sortMutations(work)
		}
	})
}

// Flush rows and map slots come out in key order whatever their keys share:
// keys shorter than the 16 bytes the sort compares first, keys alike in
// those bytes and apart after them, and zero bytes where a shorter key has
// none.
func TestSortByKeyPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	alphabet := []byte{0, 1, 0x7f, 0x80, 0xff}
	for round := range 200 {
		n := rng.IntN(300)
		if round%4 == 0 {
			n = radixMin + rng.IntN(3000) // the radix sort's
		}
		base := make([]byte, rng.IntN(24))
		for i := range base {
			base[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var rows []mutation
		var keys []string
		for i := range n {
			k := append([]byte(nil), base[:rng.IntN(len(base)+1)]...)
			for range rng.IntN(20) {
				k = append(k, alphabet[rng.IntN(len(alphabet))])
			}
			rows = append(rows, mutation{key: string(k), vals: Row{Int(int64(i))}})
			keys = append(keys, string(k))
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(a, b mutation) int { return strings.Compare(a.key, b.key) })
		sortMutations(rows)
		for i := range rows {
			if rows[i].key != want[i].key {
				t.Fatalf("round %d: row %d has key %q, want %q", round, i, rows[i].key, want[i].key)
			}
		}
		slices.SortFunc(rows, func(a, b mutation) int { return int(a.vals[0].Int() - b.vals[0].Int()) })
		for i := range rows { // the rows moved whole
			if rows[i].key != keys[i] {
				t.Fatalf("round %d: row %d's key moved away from its values", round, i)
			}
		}
		slots := rng.Perm(n)
		order := make([]int32, n)
		for i, s := range slots {
			order[i] = int32(s)
		}
		sortSlotsByKey(order, keys)
		for i := 1; i < n; i++ {
			if keys[order[i-1]] > keys[order[i]] {
				t.Fatalf("round %d: slot %d (%q) before slot %d (%q)", round, order[i-1], keys[order[i-1]], order[i], keys[order[i]])
			}
		}
		if !sameMembers(order, n) {
			t.Fatalf("round %d: slots %v are not a permutation", round, order)
		}
	}
}

func sameMembers(order []int32, n int) bool {
	seen := make([]bool, n)
	for _, s := range order {
		if s < 0 || int(s) >= n || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}
