package subtask

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// A frozen map's commit builds its record from the entries themselves
// (writeMapRecord over entryRows); a flush builds it from the rows as
// mutations (writeRecord over rows). Over random buffers of written keys
// (entries put, changed, kept, deleted, cleared, diffed whole or by touched
// entry), string keys with escaped bytes, NaN entry keys whose bits differ
// from the encoding's one NaN, NULL values and write times, both must give
// the same bytes in every buffer of every column, and the same kinds, also
// when the record is built in the recycled buffers of the one before.
func TestMapRecordFromEntriesMatchesRows(t *testing.T) {
	for _, ttl := range []int64{0, 1000} {
		t.Run(fmt.Sprintf("ttl=%d", ttl), func(t *testing.T) {
			l, err := newLayout(Layout{Name: "m", Kind: KindMap, TTL: ttl,
				Key: []Column{{Name: "k", Type: table.String().NotNull()}, {Name: "n", Type: table.BigInt().NotNull()}},
				Sub: []Column{{Name: "e", Type: table.Bytes().NotNull()}, {Name: "f", Type: table.Float().NotNull()},
					{Name: "g", Type: table.Double().NotNull()}, {Name: "b", Type: table.Boolean().NotNull()}},
				Value: []Column{{Name: "v", Type: table.BigInt()}, {Name: "s", Type: table.String()}}})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, uint64(ttl)))
			strs := []string{"", "a", "a\x00", "a\x00b", "ab", "\x00", "\xff\x00"}
			nan := math.Float64frombits(0x7FF0_0000_0000_0BAD) // a NaN that is not the encoding's
			floats := []float64{0, 1.5, -2, nan, math.Inf(-1)}
			entryOf := func() mapEntry {
				sub := Row{Str(strs[rng.IntN(len(strs))]), Float(floats[rng.IntN(len(floats))]), Float(floats[rng.IntN(len(floats))]), Bool(rng.IntN(2) == 0)}
				value := Row{Int(rng.Int64N(5)), Str(strs[rng.IntN(len(strs))])}
				if rng.IntN(4) == 0 {
					value[rng.IntN(2)] = Null
				}
				ts := noWriteTime
				if ttl > 0 && rng.IntN(3) > 0 {
					ts = rng.Int64N(3)
				}
				return mapEntry{sub: string(l.appendSub(nil, sub)), subRow: sub, value: value, ts: ts}
			}
			// sorted distinct entries
			entriesOf := func(n int) []mapEntry {
				var es []mapEntry
				for range n {
					e := entryOf()
					if i, ok := findEntry(es, e.sub); !ok {
						es = slices.Insert(es, i, e)
					}
				}
				return es
			}
			// c2 builds every round's record, handed its last record's
			// buffers back as a commit hands them: what a record leaves in
			// them must not show in the next.
			c2 := must(newPaimonCodec(l))
			for round := range 20 {
				buf := newArena[*MapEntries]()
				for k := range 60 {
					me := &MapEntries{dirty: rng.IntN(5) > 0, image: entriesOf(rng.IntN(20))}
					me.entries = slices.Clone(me.image)
					for range rng.IntN(10) {
						e := entryOf()
						i, ok := findEntry(me.entries, e.sub)
						switch {
						case ok && rng.IntN(2) == 0:
							me.entries = slices.Delete(me.entries, i, i+1)
						case ok:
							me.entries[i].value, me.entries[i].ts = e.value, e.ts
						default:
							me.entries = slices.Insert(me.entries, i, e)
						}
						me.touched = append(me.touched, e.sub)
					}
					if rng.IntN(10) == 0 {
						me.entries = nil
						me.whole = true
					}
					me.whole = me.whole || rng.IntN(2) == 0
					key := string(l.AppendKey(nil, Key{Group: int32(k % 3), Cols: Row{Str(strs[k%len(strs)]), Int(int64(k))}}))
					buf.slots[buf.add(key)] = me
				}
				var byRows, byRef mapFlush
				rows := byRows.rows(&buf, l)
				refs := byRef.entryRows(&buf, l)
				if len(rows) != len(refs) {
					t.Fatalf("round %d: %d rows, %d by reference", round, len(rows), len(refs))
				}
				if len(rows) == 0 {
					continue
				}
				c1 := must(newPaimonCodec(l))
				want, wantKinds, err := c1.writeRecord(rows)
				if err != nil {
					t.Fatal(err)
				}
				got, gotKinds, err := c2.writeMapRecord(refs, buf.keys)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotKinds, wantKinds) {
					t.Fatalf("round %d: kinds %v, want %v", round, gotKinds, wantKinds)
				}
				for j := range want.Columns() {
					sameColumn(t, fmt.Sprintf("round %d column %d", round, j), got.Column(j), want.Column(j))
				}
				want.Release()
				got.Release()
				c2.recycle()
				byRef.releaseRefs()
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sameColumn fails unless two columns hold the same bytes in every buffer.
func sameColumn(t *testing.T, what string, got, want arrow.Array) {
	t.Helper()
	if got.Len() != want.Len() || got.NullN() != want.NullN() {
		t.Fatalf("%s: %d rows, %d NULLs; want %d, %d", what, got.Len(), got.NullN(), want.Len(), want.NullN())
	}
	gb, wb := got.Data().Buffers(), want.Data().Buffers()
	if len(gb) != len(wb) {
		t.Fatalf("%s: %d buffers, want %d", what, len(gb), len(wb))
	}
	for k := range wb {
		if (gb[k] == nil) != (wb[k] == nil) || gb[k] != nil && !bytes.Equal(gb[k].Bytes(), wb[k].Bytes()) {
			t.Fatalf("%s buffer %d differs", what, k)
		}
	}
}

// sortPlaced orders rows by line, stably, whichever bytes of the lines
// differ: rows of equal lines keep their order. Rows placed with lines out
// of range keep key order.
func TestSortPlacedOrdersByLineStably(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var tmp []placedRow
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		for _, spread := range []uint64{1, 1 << 8, 1 << 20, 1 << 32} {
			rows := make([]placedRow, n)
			for i := range rows {
				rows[i] = placedRow(rng.Uint64()%spread<<32 | uint64(i))
			}
			want := slices.Clone(rows)
			slices.SortStableFunc(want, func(a, b placedRow) int { return cmp.Compare(a>>32, b>>32) })
			var got []placedRow
			got, tmp = sortPlaced(rows, tmp)
			if !slices.Equal(got, want) {
				t.Fatalf("%d rows of lines below %d: not sorted stably", n, spread)
			}
			if len(tmp) != n || n > 0 && &tmp[0] == &got[0] {
				t.Fatalf("%d rows: spare buffer of %d rows, shared: %v", n, len(tmp), n > 0 && &tmp[0] == &got[0])
			}
		}
	}
	var c paimonCodec
	datums := make([]Datum, 30) // rows 400 bytes apart: on lines of their own
	for _, far := range []bool{false, true} {
		placed, _ := c.startPlaced(3)
		placed = c.place(placed, &datums[20], 0)
		placed = c.place(placed, &datums[0], 1)
		if far {
			c.baseLine += 1 << 40 // as if the next row were far below the first
		}
		placed = c.place(placed, &datums[10], 2)
		var at []int
		for _, p := range c.sortPlaced(placed) {
			at = append(at, p.at())
		}
		want := []int{1, 2, 0}
		if far {
			want = []int{0, 1, 2}
		}
		if !slices.Equal(at, want) {
			t.Fatalf("far=%v: rows in order %v, want %v", far, at, want)
		}
	}
}

// A map record whose build fails part way (a NULL entry key, found once
// some rows' strings were placed) leaves nothing in the columns that shows
// in the next record, which matches the record of the same rows as
// mutations.
func TestMapRecordAfterFailedBuild(t *testing.T) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key:   []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub:   []Column{{Name: "e", Type: table.String().NotNull()}},
		Value: []Column{{Name: "s", Type: table.String()}, {Name: "v", Type: table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	bufOf := func(bad bool) arena[*MapEntries] {
		buf := newArena[*MapEntries]()
		for k := range 50 {
			me := &MapEntries{dirty: true, whole: true}
			for e := range 3 {
				sub := Row{Str(fmt.Sprintf("e%d", e))}
				value := Row{Str(fmt.Sprintf("value %d/%d", k, e)), Int(int64(k))}
				if !bad && (k+e)%4 == 0 {
					value[0] = Null // a NULL where the failed build placed a string
				}
				if bad && k == 49 && e == 2 {
					sub[0] = Null
				}
				me.entries = append(me.entries, mapEntry{sub: string(l.appendSub(nil, Row{Str(fmt.Sprintf("e%d", e))})), subRow: sub, value: value, ts: noWriteTime})
			}
			buf.slots[buf.add(string(l.AppendKey(nil, Key{Group: 1, Cols: Row{Int(int64(k))}})))] = me
		}
		return buf
	}
	c := must(newPaimonCodec(l))
	bad := bufOf(true)
	var f mapFlush
	if _, _, err := c.writeMapRecord(f.entryRows(&bad, l), bad.keys); err == nil {
		t.Fatal("a NULL entry key built a record")
	}
	f.releaseRefs()
	good := bufOf(false)
	got, gotKinds, err := c.writeMapRecord(f.entryRows(&good, l), good.keys)
	if err != nil {
		t.Fatal(err)
	}
	var rows mapFlush
	want, wantKinds, err := must(newPaimonCodec(l)).writeRecord(rows.rows(&good, l))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotKinds, wantKinds) {
		t.Fatalf("kinds %v, want %v", gotKinds, wantKinds)
	}
	for j := range want.Columns() {
		sameColumn(t, fmt.Sprintf("column %d", j), got.Column(j), want.Column(j))
	}
	got.Release()
	want.Release()
}
