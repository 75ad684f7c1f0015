package subtask

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lakestate/lakestate/table"
)

// Every column type a state can have goes through a paimon flush and reads
// back as written: the flush builds its Arrow buffers by hand, so each type's
// layout (widths, booleans as bits, offsets, decimal words, NULLs) is checked
// against the table's own reader. Tombstones in between leave no row.
func TestFlushColumnsRoundTripEveryType(t *testing.T) {
	b, err := OpenPaimon(t.TempDir(), PaimonOptions{NoDeletionVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	value := []Column{
		{Name: "b", Type: table.Boolean()},
		{Name: "i8", Type: table.TinyInt()},
		{Name: "i16", Type: table.SmallInt()},
		{Name: "i32", Type: table.Int()},
		{Name: "i64", Type: table.BigInt()},
		{Name: "f32", Type: table.Float()},
		{Name: "f64", Type: table.Double()},
		{Name: "s", Type: table.String()},
		{Name: "by", Type: table.Bytes()},
		{Name: "d", Type: table.Date()},
		{Name: "ts3", Type: table.Timestamp(3)},
		{Name: "ts6", Type: table.Timestamp(6)},
		{Name: "ts9", Type: table.Timestamp(9)},
		{Name: "dec", Type: table.Decimal(10, 2)},
		{Name: "dec38", Type: table.Decimal(38, 4)},
	}
	l, pt := openTestTable(t, b, Layout{Name: "all", Kind: KindValue,
		Key: []Column{
			{Name: "k", Type: table.BigInt().NotNull()},
			{Name: "ks", Type: table.String().NotNull()},
			{Name: "ki", Type: table.Int().NotNull()},
		},
		Value: value})
	const n = 300
	valueOf := func(i int) Row {
		v := Row{
			Bool(i%3 == 0),
			Int(int64(int8(i * 7))),
			Int(int64(int16(i * 301))),
			Int(int64(int32(i * 1_000_003))),
			Int(int64(i) * -1_000_000_007),
			Float(float64(float32(i) / 3)),
			Float(float64(i) / 7),
			Str(fmt.Sprintf("s-%d-%s", i, string(make([]byte, i%5)))),
			Bytes([]byte{byte(i), 0, 0xFF, byte(i >> 8)}),
			Int(int64(i - 150)),
			Int(1_700_000_000_000 + int64(i)),
			Int(1_700_000_000_000_000 - int64(i)),
			Int(1_700_000_000_000_000_000 + int64(i)*999),
			Decimal(-1, uint64(math.MaxUint64-uint64(i))), // -(i+1) as a 128-bit value
			Decimal(int64(i)<<40, uint64(i)*0x9E3779B97F4A7C15),
		}
		for j := range v {
			if (i+j)%11 == 0 {
				v[j] = Null
			}
		}
		return v
	}
	keyOf := func(i int) string {
		return string(l.AppendKey(nil, Key{Group: int32(i % 7), Cols: Row{Int(int64(i)), Str(fmt.Sprintf("k%d", i%13)), Int(int64(-i))}}))
	}
	var rows []mutation
	for i := range n {
		rows = append(rows, mutation{key: keyOf(i), vals: valueOf(i), delete: i%17 == 5})
	}
	sortMutations(rows)
	if err := pt.write(rows, 0); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(rows))
	for i, m := range rows {
		keys[i] = m.key
	}
	read := map[int]Row{}
	if err := pt.get(keys, func(i int, vals Row) { read[i] = vals }); err != nil {
		t.Fatal(err)
	}
	for i, m := range rows {
		got, ok := read[i]
		if m.delete {
			if ok {
				t.Errorf("tombstone of row %d reads %v", i, got)
			}
			continue
		}
		if !ok {
			t.Errorf("row %d not read", i)
			continue
		}
		for j, want := range m.vals {
			if !got[j].Equal(want) {
				t.Errorf("row %d column %q reads %+v, want %+v", i, value[j].Name, got[j], want)
			}
		}
	}
}

// Map entries flush and read back under their own keys when the keys'
// encodings extend one another (a string key that is a prefix of the next,
// escaped zero bytes), several entries per key.
func TestFlushRoundTripKeysExtendingOneAnother(t *testing.T) {
	b, err := OpenPaimon(t.TempDir(), PaimonOptions{NoDeletionVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, pt := openTestTable(t, b, Layout{Name: "m", Kind: KindMap,
		Key:   []Column{{Name: "k", Type: table.String().NotNull()}},
		Sub:   []Column{{Name: "e", Type: table.String().NotNull()}, {Name: "n", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "v", Type: table.BigInt()}}})
	keys := []string{"a", "a\x00", "a\x00b", "ab", "b"}
	var rows []mutation
	want := map[string]string{}
	for ki, k := range keys {
		prefix := l.AppendKey(nil, Key{Group: 1, Cols: Row{Str(k)}})
		for e := range 3 {
			sub := Row{Str(keys[(ki+e)%len(keys)]), Int(int64(e - 1))}
			key := string(l.appendSub(slices.Clone(prefix), sub))
			rows = append(rows, mutation{key: key, vals: Row{Int(int64(ki*10 + e))}})
			want[key] = fmt.Sprintf("%q/%q,%d=%d", k, sub[0].Str(), sub[1].Int(), ki*10+e)
		}
	}
	sortMutations(rows)
	if err := pt.write(rows, 0); err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, k := range keys {
		prefixes = append(prefixes, string(l.AppendKey(nil, Key{Group: 1, Cols: Row{Str(k)}})))
	}
	slices.Sort(prefixes)
	got := map[string]string{}
	if err := pt.scanPrefixes(prefixes, func(_ int, e entry) {
		got[e.key] = fmt.Sprintf("%q/%q,%d=%d", e.pk[1].Str(), e.pk[2].Str(), e.pk[3].Int(), e.vals[0].Int())
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("key %x reads %s, want %s", k, got[k], w)
		}
	}
}

// openTestTable opens the paimon table of spec in b.
func openTestTable(t *testing.T, b *PaimonBackend, spec Layout) (*layout, *paimonTable) {
	t.Helper()
	l, err := newLayout(spec)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := b.open(l)
	if err != nil {
		t.Fatal(err)
	}
	return l, ct.(*paimonTable)
}

// A flush record holds what Arrow's own builders make of the same rows, in
// every column type, with NULLs and tombstones, also when built in the
// recycled buffers of a record before it; its validity bitmaps are clear
// past the last row, as the builders leave them.
func TestFlushRecordMatchesArrowBuilders(t *testing.T) {
	value := []Column{
		{Name: "b", Type: table.Boolean()}, {Name: "i8", Type: table.TinyInt()}, {Name: "i16", Type: table.SmallInt()},
		{Name: "i32", Type: table.Int()}, {Name: "i64", Type: table.BigInt()}, {Name: "f32", Type: table.Float()},
		{Name: "f64", Type: table.Double()}, {Name: "s", Type: table.String()}, {Name: "by", Type: table.Bytes()},
		{Name: "d", Type: table.Date()}, {Name: "ts9", Type: table.Timestamp(9)}, {Name: "dec38", Type: table.Decimal(38, 4)},
	}
	l, err := newLayout(Layout{Name: "all", Kind: KindValue,
		Key:   []Column{{Name: "k", Type: table.BigInt().NotNull()}, {Name: "ks", Type: table.String().NotNull()}},
		Value: value})
	if err != nil {
		t.Fatal(err)
	}
	c := must(newPaimonCodec(l))
	for round, n := range []int{300, 70, 1000, 1} {
		var rows []mutation
		for i := range n {
			v := Row{Bool(i%3 == 0), Int(int64(int8(i * 7))), Int(int64(int16(i * 301))), Int(int64(int32(i * 1_000_003))),
				Int(int64(i) * -1_000_000_007), Float(float64(float32(i) / 3)), Float(float64(i) / 7),
				Str(fmt.Sprintf("s-%d-%d", i, round)), Bytes([]byte{byte(i), 0, 0xFF}), Int(int64(i - 150)),
				Int(1_700_000_000_000_000_000 + int64(i)*999), Decimal(int64(i)<<40, uint64(i)*0x9E3779B97F4A7C15)}
			for j := range v {
				if (i+j+round)%(5+round) == 0 {
					v[j] = Null
				}
			}
			key := string(l.AppendKey(nil, Key{Group: int32(i % 7), Cols: Row{Int(int64(i)), Str(fmt.Sprintf("k%d", i%13))}}))
			rows = append(rows, mutation{key: key, vals: v, delete: (i+round)%17 == 5})
		}
		sortMutations(rows)
		got, _, err := c.writeRecord(rows)
		if err != nil {
			t.Fatal(err)
		}
		b, appenders := newRecordAppender(c.schema)
		pk := make(Row, c.nPK)
		for _, m := range rows {
			if err := l.decodePK(pk, m.key); err != nil {
				t.Fatal(err)
			}
			for j, d := range pk {
				appenders[j](d)
			}
			for j := range value {
				d := Null
				if !m.delete {
					d = m.vals[j]
				}
				appenders[c.nPK+j](d)
			}
		}
		want := b.NewRecord()
		if !array.RecordEqual(got, want) {
			t.Fatalf("round %d: the flush record differs from the builders'", round)
		}
		for j, col := range got.Columns() {
			if valid := col.Data().Buffers()[0]; valid != nil {
				for k := n; k < 8*valid.Len(); k++ {
					if bitutil.BitIsSet(valid.Bytes(), k) {
						t.Fatalf("round %d column %d: validity bit %d of %d rows set", round, j, k, n)
					}
				}
			}
		}
		got.Release()
		want.Release()
		b.Release()
		c.recycle()
	}
}
