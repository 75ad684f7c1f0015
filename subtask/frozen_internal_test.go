package subtask

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/table"
)

func TestFoldRows(t *testing.T) {
	m := func(key string, v int64, del bool) mutation {
		if del {
			return mutation{key: key, delete: true}
		}
		return mutation{key: key, vals: Row{Int(v)}}
	}
	older := []mutation{m("a", 1, false), m("c", 3, false), m("d", 0, true), m("f", 6, false)}
	newer := []mutation{m("b", 20, false), m("c", 0, true), m("d", 40, false), m("g", 70, false)}
	got := foldRows(newer, older)
	want := []mutation{m("a", 1, false), m("b", 20, false), m("c", 0, true), m("d", 40, false), m("f", 6, false), m("g", 70, false)}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].key != want[i].key || got[i].delete != want[i].delete || !got[i].vals.Equal(want[i].vals) {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := foldRows(newer, nil); len(got) != len(newer) {
		t.Fatalf("fold over nothing: %d rows", len(got))
	}
}

// A map flush that diffs only the touched entries writes exactly the rows of
// one that diffs every entry, over random writes to keys with committed
// entries, with and without a TTL.
func TestMapFlushTouchedEqualsWhole(t *testing.T) {
	for _, ttl := range []int64{0, 50} {
		t.Run(fmt.Sprint("ttl=", ttl), func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(ttl)))
			s := NewStore(NewMemory())
			m, err := s.Map(Layout{Name: "m", Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
				Sub: []Column{{Name: "s", Type: table.BigInt().NotNull()}}, Value: []Column{{Name: "v", Type: table.BigInt()}}, TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			keyOf := func(k int64) Key { return Key{Group: 1, Cols: Row{Int(k)}} }
			partial := 0 // flushed handles that diffed their touched entries only
			for round := range 100 {
				s.SetNow(int64(round) * 10)
				for range 20 {
					k := r.Int64N(8)
					mes, err := m.GetBatch([]Key{keyOf(k)}, nil)
					if err != nil {
						t.Fatal(err)
					}
					n := r.IntN(40)
					if r.IntN(2) == 0 {
						n = r.IntN(4)
					}
					for range n {
						sub := Row{Int(r.Int64N(60))}
						switch r.IntN(20) {
						case 0:
							mes[0].Clear()
						case 1, 2, 3, 4, 5:
							mes[0].Delete(sub)
						case 6:
							if v, ok := mes[0].Get(sub); ok {
								mes[0].Put(sub, v) // a rewrite of the same value
							}
						default:
							mes[0].Put(sub, Row{Int(r.Int64N(3))})
						}
					}
					s.EndBatch()
				}
				var touched mapFlush
				got := slices.Clone(touched.rows(&m.buf, m.l))
				for i, me := range m.buf.slots {
					if m.buf.live(int32(i)) {
						if me.dirty && !me.whole {
							partial++
						}
						me.whole = true
					}
				}
				var whole mapFlush
				want := whole.rows(&m.buf, m.l)
				if len(got) != len(want) {
					t.Fatalf("round %d: %d rows, want %d", round, len(got), len(want))
				}
				for i := range want {
					if got[i].key != want[i].key || got[i].delete != want[i].delete || !got[i].vals.Equal(want[i].vals) {
						t.Fatalf("round %d row %d: %+v, want %+v", round, i, got[i], want[i])
					}
				}
				if _, err := s.Flush(int64(round + 1)); err != nil {
					t.Fatal(err)
				}
			}
			if partial == 0 {
				t.Fatal("no flush diffed touched entries only")
			}
			t.Logf("%d partial diffs", partial)
		})
	}
}
