package subtask

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkMapFlushHotKeys builds the rows of a join side whose keys hold
// many entries (an auction's bids) and got one new entry each in the
// interval: diffing the touched entries only against diffing every entry.
// An op is one flush of 1,000 keys of 500 entries.
func BenchmarkMapFlushHotKeys(b *testing.B) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap, Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.BigInt().NotNull()}}, Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	const keys, entries = 1000, 500
	buf := newArena[*MapEntries]()
	for k := range int64(keys) {
		me := &MapEntries{dirty: true}
		for e := range int64(entries) {
			me.image = append(me.image, mapEntry{sub: string(l.appendSub(nil, Row{Int(e)})), value: Row{Int(e)}, ts: noWriteTime})
		}
		me.entries = append(append([]mapEntry(nil), me.image...), mapEntry{sub: string(l.appendSub(nil, Row{Int(entries)})), value: Row{Int(1)}, ts: noWriteTime})
		me.touched = []string{me.entries[entries].sub}
		buf.slots[buf.add(string(l.AppendKey(nil, Key{Group: int32(k % 128), Cols: Row{Int(k)}})))] = me
	}
	for _, whole := range []bool{false, true} {
		name := "touched"
		if whole {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			for _, me := range buf.slots {
				me.whole = whole
			}
			var f mapFlush
			for b.Loop() {
				if rows := f.rows(&buf, l); len(rows) != keys {
					b.Fatalf("%d rows", len(rows))
				}
			}
		})
	}
}
