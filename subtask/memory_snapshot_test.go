package subtask

import (
	"strings"
	"testing"

	"github.com/lakestate/lakestate/table"
)

func sampleMemorySnapshot(t testing.TB) []byte {
	b := NewMemory()
	s := NewStore(b)
	s.SetNow(42)
	v, err := s.Value(Layout{Name: "v", Key: []Column{{"k", table.String().NotNull()}},
		Value: []Column{{"d", table.Double()}, {"n", table.Decimal(20, 2)}}, TTL: 9})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Map(Layout{Name: "m", Key: []Column{{"k", table.Int().NotNull()}},
		Sub: []Column{{"r", table.Bytes().NotNull()}}, Value: []Column{{"c", table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	v.Put(Key{Group: 3, Cols: Row{Str("a\x00b")}}, Row{Float(1.5), Decimal(-1, 7)})
	v.Put(Key{Group: 1, Cols: Row{Str("")}}, Row{Null, Null})
	mes, err := m.GetBatch([]Key{{Group: 2, Cols: Row{Int(-4)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mes[0].Put(Row{Str("x")}, Row{Int(1)})
	mes[0].Put(Row{Str("y")}, Row{Int(2)})
	cp, err := s.Flush(1)
	if err != nil {
		t.Fatal(err)
	}
	return cp.State
}

func TestMemorySnapshotRoundTrip(t *testing.T) {
	blob := sampleMemorySnapshot(t)
	b, err := RestoreMemory("chk-1", blob)
	if err != nil {
		t.Fatal(err)
	}
	if again := b.snapshot(); string(again) != string(blob) {
		t.Fatal("a restored memory backend serializes to different bytes")
	}
	if b2, _ := RestoreMemory("x", sampleMemorySnapshot(t)); string(b2.snapshot()) != string(blob) {
		t.Fatal("the snapshot of one state is not deterministic")
	}
	// A table restored under another shape is refused.
	s := NewStore(b)
	if _, err := s.Value(Layout{Name: "v", Key: []Column{{"k", table.String().NotNull()}}, Value: []Column{{"d", table.Double()}}}); err == nil {
		t.Fatal("a table of another shape opened")
	}
}

func TestMemorySnapshotRejectsCorruption(t *testing.T) {
	blob := sampleMemorySnapshot(t)
	for i := 0; i < len(blob); i++ {
		bad := []byte(string(blob))
		bad[i] ^= 0x10
		if _, err := RestoreMemory("chk-7", bad); err == nil {
			t.Fatalf("flipped byte %d accepted", i)
		} else if !strings.Contains(err.Error(), "chk-7") {
			t.Fatalf("error does not name the blob: %v", err)
		}
	}
	if _, err := RestoreMemory("chk-7", blob[:len(blob)-1]); err == nil {
		t.Fatal("truncated snapshot accepted")
	}
}

// The fuzz target skips the checksum, which random input never passes.
func FuzzMemorySnapshot(f *testing.F) {
	blob := sampleMemorySnapshot(f)
	f.Add(blob[len(memMagic) : len(blob)-4])
	f.Add([]byte{})
	f.Add([]byte{1, 1, 'v', 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeMemoryBody(data)
		if err != nil {
			return
		}
		b.snapshot()
	})
}
