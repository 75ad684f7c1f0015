package subtask

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/table"
)

func boundsLayouts(t *testing.T) (value, mapped *layout) {
	t.Helper()
	k := []Column{{Name: "k", Type: table.BigInt().NotNull()}, {Name: "s", Type: table.String().NotNull()}}
	v := []Column{{Name: "n", Type: table.BigInt()}}
	value, err := newLayout(Layout{Name: "v", Kind: KindValue, Key: k, Value: v})
	if err != nil {
		t.Fatal(err)
	}
	mapped, err = newLayout(Layout{Name: "m", Kind: KindMap, Key: k[:1], Sub: k[1:], Value: v})
	if err != nil {
		t.Fatal(err)
	}
	return value, mapped
}

// A key or prefix may be held when it lies within its key group's bounds, or
// when the least key starts with it; a group never written holds nothing.
func TestKeyBoundsMayHold(t *testing.T) {
	_, l := boundsLayouts(t)
	full := func(kg int32, k int64, s string) string {
		return string(l.appendSub(l.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k)}}), Row{Str(s)}))
	}
	prefix := func(kg int32, k int64) string { return string(l.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k)}})) }
	var b keyBounds
	b.known = true
	b.add([]mutation{
		{key: full(3, 10, "b")},
		{key: full(3, 20, "a")},
		{key: full(3, 30, "z"), delete: true}, // a tombstone adds no key
		{key: full(5, 7, "m")},
	})
	for _, c := range []struct {
		name string
		key  string
		want bool
	}{
		{"prefix of the least key", prefix(3, 10), true},
		{"prefix inside", prefix(3, 15), true},
		{"prefix of the greatest key", prefix(3, 20), true},
		{"prefix below", prefix(3, 9), false},
		{"prefix above", prefix(3, 21), false},
		{"prefix of a tombstone only", prefix(3, 30), false},
		{"full key before the least", full(3, 10, "a"), false},
		{"the least key", full(3, 10, "b"), true},
		{"full key after the greatest", full(3, 20, "b"), false},
		{"group of one key", prefix(5, 7), true},
		{"group never written", prefix(4, 10), false},
		{"group past every written one", prefix(100, 10), false},
	} {
		if got := b.mayHold(c.key); got != c.want {
			t.Errorf("%s: mayHold = %v, want %v", c.name, got, c.want)
		}
	}
	b.known = false
	if !b.mayHold(prefix(4, 10)) {
		t.Error("unknown bounds excluded a key")
	}
}

// Probes answered by the bounds read exactly what probes of the whole table
// read, over flushes of upserts and tombstones in several key groups, for
// point probes (value) and prefix probes (map).
func TestBoundedProbesReadAsUnbounded(t *testing.T) {
	b, err := OpenPaimon(t.TempDir(), PaimonOptions{NoDeletionVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	vl, ml := boundsLayouts(t)
	var tables []*paimonTable
	for _, l := range []*layout{vl, ml} {
		ct, err := b.open(l)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, ct.(*paimonTable))
	}
	vt, mt := tables[0], tables[1]
	if !vt.bounds.known || !mt.bounds.known {
		t.Fatal("a table created empty has no bounds")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	prefix := func(kg int32, k int64) string { return string(ml.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k)}})) }
	sub := func(s int) Row { return Row{Str(fmt.Sprintf("s%d", s))} }
	var probes, prefixHits, pointHits int
	for round := range 12 {
		// Keys grow with the rounds, as ids do, with some old keys rewritten.
		var vrows, mrows []mutation
		for range 40 {
			kg := int32(rng.IntN(6))
			k := int64(round*10 + rng.IntN(10))
			if rng.IntN(4) == 0 {
				k = int64(rng.IntN(round*10 + 10))
			}
			del := rng.IntN(5) == 0
			vkey := string(vl.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k), sub(rng.IntN(3))[0]}}))
			mkey := string(ml.appendSub([]byte(prefix(kg, k)), sub(rng.IntN(3))))
			vals := Row{Int(int64(round))}
			vrows = append(vrows, mutation{key: vkey, vals: vals, delete: del})
			mrows = append(mrows, mutation{key: mkey, vals: vals, delete: del})
		}
		for _, w := range []struct {
			t    *paimonTable
			rows []mutation
		}{{vt, dedupMutations(vrows)}, {mt, dedupMutations(mrows)}} {
			if err := w.t.write(w.rows, 0); err != nil {
				t.Fatal(err)
			}
		}
		var points, prefixes []string
		for kg := int32(0); kg < 8; kg++ {
			for k := int64(0); k < int64(round*10+20); k++ {
				prefixes = append(prefixes, prefix(kg, k))
				for s := range 3 {
					points = append(points, string(vl.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k), sub(s)[0]}})))
				}
			}
		}
		slices.Sort(points)
		slices.Sort(prefixes)
		probes += len(points) + len(prefixes)
		read := func(bounded bool) (pointsRead, prefixRead []string) {
			vt.bounds.known, mt.bounds.known = bounded, bounded
			defer func() { vt.bounds.known, mt.bounds.known = true, true }()
			if err := vt.get(points, func(i int, vals Row) {
				pointsRead = append(pointsRead, fmt.Sprintf("%d=%v", i, vals))
			}); err != nil {
				t.Fatal(err)
			}
			if err := mt.scanPrefixes(prefixes, func(i int, e entry) {
				prefixRead = append(prefixRead, fmt.Sprintf("%d:%x=%v", i, e.key, e.vals))
			}); err != nil {
				t.Fatal(err)
			}
			return pointsRead, prefixRead
		}
		wantPoints, wantPrefixes := read(false)
		gotPoints, gotPrefixes := read(true)
		if !slices.Equal(gotPoints, wantPoints) {
			t.Fatalf("round %d: bounded point probes read\n%v\nwant\n%v", round, gotPoints, wantPoints)
		}
		if !slices.Equal(gotPrefixes, wantPrefixes) {
			t.Fatalf("round %d: bounded prefix probes read\n%v\nwant\n%v", round, gotPrefixes, wantPrefixes)
		}
		pointHits += len(wantPoints)
		prefixHits += len(wantPrefixes)
	}
	if pointHits == 0 || prefixHits == 0 {
		t.Fatalf("the probes found %d points and %d prefix rows: the comparison tested nothing", pointHits, prefixHits)
	}
}

// dedupMutations sorts rows by key and keeps the last row of each key, as a
// flush does.
func dedupMutations(rows []mutation) []mutation {
	slices.SortStableFunc(rows, func(a, b mutation) int { return strings.Compare(a.key, b.key) })
	out := rows[:0]
	for i, m := range rows {
		if i+1 < len(rows) && rows[i+1].key == m.key {
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestCompareJoined(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	word := func() string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = "ab"[r.IntN(2)]
		}
		return string(b)
	}
	for range 5000 {
		a, b, c := word(), word(), word()
		if got, want := compareJoined(a, b, c), strings.Compare(a+b, c); got != want {
			t.Fatalf("compareJoined(%q, %q, %q) = %d, want %d", a, b, c, got, want)
		}
	}
}

// Spans added in any order leave the bounds that adding the same keys as
// sorted rows does.
func TestKeyBoundsAddSpan(t *testing.T) {
	_, l := boundsLayouts(t)
	r := rand.New(rand.NewPCG(4, 4))
	var spans, rows keyBounds
	spans.known, rows.known = true, true
	for range 200 {
		kg := int32(r.IntN(4))
		prefix := string(l.AppendKey(nil, Key{Group: kg, Cols: Row{Int(r.Int64N(50))}}))
		lo, hi := string(l.appendSub(nil, Row{Str(fmt.Sprint(r.IntN(10)))})), string(l.appendSub(nil, Row{Str(fmt.Sprint(r.IntN(10)))}))
		if lo > hi {
			lo, hi = hi, lo
		}
		spans.addSpan(prefix, lo, hi)
		rows.add([]mutation{{key: prefix + lo}, {key: prefix + hi}})
	}
	if len(spans.byKG) != len(rows.byKG) {
		t.Fatalf("%d key groups, want %d", len(spans.byKG), len(rows.byKG))
	}
	for kg := range rows.byKG {
		if spans.byKG[kg] != rows.byKG[kg] {
			t.Fatalf("key group %d: %+v, want %+v", kg, spans.byKG[kg], rows.byKG[kg])
		}
	}
}
