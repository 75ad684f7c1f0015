package subtask

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// A key without entries starts with the room the last interval's new keys
// took, by the median: keys of five to eight rows make the next new key
// start with eight, keys of one row with one, keys of hundreds with the
// bound, over a flush (Flush) as over a freeze (Freeze).
func TestNewKeysStartWithTheirLikesRoom(t *testing.T) {
	bigint := table.BigInt().NotNull()
	for _, frozen := range []bool{false, true} {
		s := NewStore(NewMemory())
		if frozen {
			b, err := OpenPaimon(t.TempDir(), PaimonOptions{NoDeletionVectors: true})
			if err != nil {
				t.Fatal(err)
			}
			s = NewStore(b)
		}
		m, err := s.Map(Layout{Name: "m", Key: []Column{{Name: "k", Type: bigint}},
			Sub: []Column{{Name: "s", Type: bigint}}, Value: []Column{{Name: "v", Type: table.BigInt()}}})
		if err != nil {
			t.Fatal(err)
		}
		id, next := int64(0), int64(0)
		// interval writes keys of the given sizes, all new, ends the
		// interval and returns the capacity a new key's first Put gives.
		interval := func(sizes ...int) int {
			t.Helper()
			for _, n := range sizes {
				next++
				mes, err := m.GetBatch([]Key{{Group: 1, Cols: Row{Int(next)}}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for e := range n {
					mes[0].Put(Row{Int(int64(e))}, Row{Int(1)})
				}
				s.EndBatch()
			}
			id++
			if frozen {
				f, err := s.Freeze(id)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Commit(); err != nil {
					t.Fatal(err)
				}
				if err := s.Release(f, true, nil); err != nil {
					t.Fatal(err)
				}
			} else if _, err := s.Flush(id); err != nil {
				t.Fatal(err)
			}
			next++
			mes, err := m.GetBatch([]Key{{Group: 1, Cols: Row{Int(next)}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			mes[0].Put(Row{Int(0)}, Row{Int(1)})
			s.EndBatch() // the probe key counts towards the next interval
			return cap(mes[0].entries)
		}
		if c := interval(5, 6, 8, 1, 7); c != 8 {
			t.Fatalf("frozen=%v: after keys of 5-8 rows a new key starts with room for %d, want 8", frozen, c)
		}
		if c := interval(1, 1, 2, 1, 30); c != 1 {
			t.Fatalf("frozen=%v: after keys of mostly 1 row a new key starts with room for %d, want 1", frozen, c)
		}
		if c := interval(100, 200, 300); c != 32 {
			t.Fatalf("frozen=%v: after keys of 100-300 rows a new key starts with room for %d, want the bound 32", frozen, c)
		}
		if err := s.Backend().Close(); err != nil {
			t.Fatal(err)
		}
	}
}
