package subtask

import (
	"math/rand/v2"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkValueRows builds the flush rows of a value buffer of 150K written
// keys shaped as q18's (a key group, two BIGINT key columns, a row of eight
// values), added in random order as an interval's reads leave them.
func BenchmarkValueRows(b *testing.B) {
	const n = 150_000
	l, err := newLayout(Layout{Name: "v", Kind: KindValue,
		Key:   []Column{{Name: "a", Type: table.BigInt().NotNull()}, {Name: "b", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	buf := newArena[valueSlot]()
	for i := range n {
		k := Key{Group: int32(rng.IntN(128)), Cols: Row{Int(int64(rng.IntN(20_000))), Int(int64(1_000_000 + i))}}
		at := buf.add(string(l.AppendKey(nil, k)))
		buf.slots[at] = valueSlot{value: Row{Int(int64(i))}, ts: noWriteTime, imageTs: noWriteTime, dirty: true}
	}
	var rows []mutation
	for b.Loop() {
		rows = valueRows(&buf, rows, n, l)
	}
	if len(rows) != n {
		b.Fatalf("%d rows, want %d", len(rows), n)
	}
}
