package subtask_test

import (
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// PinSnapshot moves reads to the snapshot it names, back or forth.
func TestPaimonPinSnapshot(t *testing.T) {
	b, err := subtask.OpenPaimon(t.TempDir(), subtask.PaimonOptions{NoDeletionVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := subtask.NewStore(b)
	l := subtask.Layout{Name: "v", Kind: subtask.KindValue, TTL: 5000,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}}}
	v, err := s.Value(l)
	if err != nil {
		t.Fatal(err)
	}
	key := subtask.Key{Group: 1, Cols: subtask.Row{subtask.Int(7)}}
	read := func() int64 {
		t.Helper()
		rows, err := v.GetBatch([]subtask.Key{key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.EndBatch()
		if rows[0] == nil {
			return -1
		}
		return rows[0][0].Int()
	}
	var snaps []int64
	for i := int64(1); i <= 2; i++ {
		v.Put(key, subtask.Row{subtask.Int(i)})
		cp, err := s.Flush(i)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, cp.Tables[0].Snapshot)
	}
	if err := b.PinSnapshot("v", snaps[0]); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != 1 {
		t.Fatalf("at snapshot %d: %d, want 1", snaps[0], got)
	}
	if err := b.PinSnapshot("v", snaps[1]); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != 2 {
		t.Fatalf("at snapshot %d: %d, want 2", snaps[1], got)
	}
	if err := b.PinSnapshot("w", snaps[1]); err == nil {
		t.Fatal("pinned a state that is not registered")
	}
	if err := b.PinSnapshot("v", 99); err == nil {
		t.Fatal("pinned a snapshot that does not exist")
	}
	if ttl, ok := b.TTL("v"); !ok || ttl != 5000 {
		t.Fatalf("TTL %d %v", ttl, ok)
	}
	if _, ok := b.TTL("w"); ok {
		t.Fatal("TTL of a state that is not registered")
	}
}
