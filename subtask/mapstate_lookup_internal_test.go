package subtask

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// Gets, Puts and Deletes of two handles in any order, entry keys rising
// mostly and sometimes not (inserts in the middle, at the end, replacements
// and deletes between a Get and the write after it), leave each handle's
// entries sorted and equal to a model's, through flushes.
func TestMapEntriesLookupsMatchModel(t *testing.T) {
	bigint := table.BigInt().NotNull()
	s := NewStore(NewMemory())
	m, err := s.Map(Layout{Name: "m", Key: []Column{{Name: "k", Type: bigint}},
		Sub: []Column{{Name: "s", Type: bigint}}, Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	model := [2]map[int64]int64{{}, {}}
	next := [2]int64{}
	keys := []Key{{Group: 1, Cols: Row{Int(1)}}, {Group: 2, Cols: Row{Int(2)}}}
	for batch := range 200 {
		mes, err := m.GetBatch(keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		for op := range 50 {
			h := r.IntN(2)
			var sub int64
			if r.IntN(3) == 0 || len(model[h]) == 0 {
				next[h] += 3
				sub = next[h] // past every entry
			} else {
				sub = r.Int64N(next[h] + 2) // any, held or not
			}
			what := fmt.Sprintf("batch %d op %d handle %d entry %d", batch, op, h, sub)
			switch r.IntN(4) {
			case 0:
				v, ok := mes[h].Get(Row{Int(sub)})
				want, held := model[h][sub]
				if ok != held || ok && v[0].Int() != want {
					t.Fatalf("%s: Get %v %v, want %v %v", what, v, ok, want, held)
				}
			case 1, 2:
				v := r.Int64N(1000)
				mes[h].Put(Row{Int(sub)}, Row{Int(v)})
				model[h][sub] = v
			case 3:
				_, held := model[h][sub]
				if ok := mes[h].Delete(Row{Int(sub)}); ok != held {
					t.Fatalf("%s: Delete %v, want %v", what, ok, held)
				}
				delete(model[h], sub)
			}
		}
		for h, me := range mes {
			want := slices.Sorted(func(yield func(int64) bool) {
				for k := range model[h] {
					if !yield(k) {
						return
					}
				}
			})
			if me.Len() != len(want) {
				t.Fatalf("batch %d handle %d: %d entries, want %d", batch, h, me.Len(), len(want))
			}
			for i, k := range want {
				sub, v := me.At(i)
				if sub[0].Int() != k || v[0].Int() != model[h][k] {
					t.Fatalf("batch %d handle %d: entry %d is (%v, %v), want (%d, %d)", batch, h, i, sub, v, k, model[h][k])
				}
			}
		}
		s.EndBatch()
		if batch%20 == 19 {
			if _, err := s.Flush(int64(batch)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
