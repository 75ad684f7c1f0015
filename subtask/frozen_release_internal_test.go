package subtask

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// A release whose pin of one table fails moves no table's reads: the
// barrier keeps only the snapshots the reads used before the release (and
// the rounds' next ones) from expiring, so a table moved alone would read a
// snapshot nothing pins.
func TestReleaseFailureMovesNoTable(t *testing.T) {
	b, err := OpenPaimon(t.TempDir(), PaimonOptions{FileIO: table.NewLocalFileIO(), NoDeletionVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := NewStore(b)
	key := []Column{{Name: "k", Type: table.BigInt().NotNull()}}
	val := []Column{{Name: "v", Type: table.BigInt()}}
	first, err := s.Value(Layout{Name: "a", Key: key, Value: val})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Value(Layout{Name: "b", Key: key, Value: val})
	if err != nil {
		t.Fatal(err)
	}
	k := Key{Group: 1, Cols: Row{Int(1)}}
	put := func(v int64) {
		first.Put(k, Row{Int(v)})
		second.Put(k, Row{Int(v)})
	}
	put(1)
	if _, err := s.Flush(1); err != nil {
		t.Fatal(err)
	}
	was := b.tables["a"].snapshot
	put(2)
	f, err := s.Freeze(2)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := f.Commit()
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]int64{"a": cp.Tables[0].Snapshot, "b": cp.Tables[1].Snapshot + 100} // b's does not exist
	if err := s.Release(f, true, pins); err == nil {
		t.Fatal("released with a pin of a missing snapshot")
	}
	if got := b.tables["a"].snapshot; got != was {
		t.Fatalf("table a reads snapshot %d after a failed release, want %d (before it)", got, was)
	}
	// The failed flush folds into the next one, whose release moves both.
	put(3)
	g, err := s.Freeze(3)
	if err != nil {
		t.Fatal(err)
	}
	cp, err = g.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(g, true, map[string]int64{"a": cp.Tables[0].Snapshot, "b": cp.Tables[1].Snapshot}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*ValueState{first, second} {
		rows, err := st.GetBatch([]Key{k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || !rows[0].Equal(Row{Int(3)}) {
			t.Fatalf("state %s reads %v, want [3]", st.Name(), rows)
		}
	}
}
