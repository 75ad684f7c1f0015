package subtask

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakestate/lakestate/table"
)

// A flush decodes each row's encoded primary key straight into the record's
// key columns. Sorted keys of every key column type, strings with escaped
// bytes and keys that share every length of prefix among them, must come
// out of the record exactly as a whole decode of each key gives them, and
// twice in a row (the second flush reuses the first one's columns).
func TestFlushKeysDecodeIntoColumns(t *testing.T) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key: []Column{{Name: "s", Type: table.String().NotNull()}, {Name: "k", Type: table.BigInt().NotNull()},
			{Name: "b", Type: table.Boolean().NotNull()}, {Name: "i8", Type: table.TinyInt().NotNull()},
			{Name: "i16", Type: table.SmallInt().NotNull()}, {Name: "d", Type: table.Date().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.Bytes().NotNull()}, {Name: "i", Type: table.Int().NotNull()},
			{Name: "f", Type: table.Float().NotNull()}, {Name: "g", Type: table.Double().NotNull()},
			{Name: "t6", Type: table.Timestamp(6).NotNull()}, {Name: "dec", Type: table.Decimal(38, 2).NotNull()}},
		Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newPaimonCodec(l)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	strs := []string{"", "a", "a\x00", "a\x00\x00", "a\x00b", "a\x01", "ab", "b", "\x00", "\xff\x00"}
	floats := []float64{0, math.Copysign(0, -1), 1.5, -1.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.SmallestNonzeroFloat64}
	pick := func(vs ...int64) Datum { return Int(vs[rng.IntN(len(vs))]) }
	seen := map[string]bool{}
	var rows []mutation
	for len(rows) < 3000 {
		key := Key{Group: int32(rng.IntN(3)), Cols: Row{Str(strs[rng.IntN(len(strs))]), Int(int64(rng.IntN(4)) - 2),
			Bool(rng.IntN(2) == 0), pick(math.MinInt8, -1, 0, math.MaxInt8), pick(math.MinInt16, -1, 0, 300, math.MaxInt16),
			pick(-719_162, -1, 0, 20_000)}}
		f := floats[rng.IntN(len(floats))]
		sub := Row{Bytes([]byte(strs[rng.IntN(len(strs))])), pick(math.MinInt32, -1, 0, math.MaxInt32),
			Float(float64(float32(f))), Float(f), pick(math.MinInt64, -1, 0, 1_700_000_000_000_000, math.MaxInt64),
			[]Datum{Decimal(-1, math.MaxUint64), Decimal(0, 0), Decimal(0, 12345), Decimal(math.MaxInt64, math.MaxUint64), Decimal(math.MinInt64+1, 0)}[rng.IntN(5)]}
		enc := string(l.appendSub(l.AppendKey(nil, key), sub))
		if seen[enc] {
			continue
		}
		seen[enc] = true
		rows = append(rows, mutation{key: enc, delete: rng.IntN(5) == 0, vals: Row{Int(int64(len(rows)))}})
	}
	sortMutations(rows)
	for range 2 {
		rec, _, err := c.writeRecord(rows)
		if err != nil {
			t.Fatal(err)
		}
		want := make(Row, len(l.pkTypes))
		for j := range want {
			if n := rec.Column(j).NullN(); n != 0 {
				t.Fatalf("key column %d holds %d NULLs", j, n)
			}
		}
		for i, m := range rows {
			if err := l.decodePK(want, m.key); err != nil {
				t.Fatal(err)
			}
			for j, w := range want {
				if got := keyColumnDatum(t, rec.Column(j), i); got != w {
					t.Fatalf("row %d (key %q) column %d: record holds %+v, the key decodes to %+v", i, m.key, j, got, w)
				}
			}
		}
		rec.Release()
	}
}

// keyColumnDatum is value i of a key column as a datum.
func keyColumnDatum(t *testing.T, col arrow.Array, i int) Datum {
	t.Helper()
	switch col := col.(type) {
	case *array.Boolean:
		return Bool(col.Value(i))
	case *array.Int8:
		return Int(int64(col.Value(i)))
	case *array.Int16:
		return Int(int64(col.Value(i)))
	case *array.Int32:
		return Int(int64(col.Value(i)))
	case *array.Date32:
		return Int(int64(col.Value(i)))
	case *array.Int64:
		return Int(col.Value(i))
	case *array.Timestamp:
		return Int(int64(col.Value(i)))
	case *array.Float32:
		return Float(float64(col.Value(i)))
	case *array.Float64:
		return Float(col.Value(i))
	case *array.String:
		return Str(col.Value(i))
	case *array.Binary:
		return Bytes(col.Value(i))
	case *array.Decimal128:
		v := col.Value(i)
		return Decimal(v.HighBits(), v.LowBits())
	}
	t.Fatalf("key column is %T", col)
	return Null
}
