package subtask

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// layerFixture is a map table (PK [kg, k, s]) with committed rows under a
// frozen layer, and the rows a read must see: the layer's upserts over the
// committed rows, minus its tombstones.
type layerFixture struct {
	l     *layout
	layer *frozenLayer
	want  map[string]Row
}

func (fx *layerFixture) full(kg int32, k int64, s string) string {
	return string(fx.l.appendSub(fx.l.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k)}}), Row{Str(s)}))
}

func (fx *layerFixture) prefix(kg int32, k int64) string {
	return string(fx.l.AppendKey(nil, Key{Group: kg, Cols: Row{Int(k)}}))
}

// newLayerFixture commits the under rows to a memory table and freezes the
// frozen rows over it; a nil Row is a tombstone.
func newLayerFixture(t *testing.T, under, frozen map[string]Row) *layerFixture {
	t.Helper()
	_, l := boundsLayouts(t)
	b := NewMemory()
	ct, err := b.open(l)
	if err != nil {
		t.Fatal(err)
	}
	mt := ct.(*memTable)
	want := map[string]Row{}
	for k, v := range under {
		mt.apply(mutation{key: k, vals: v})
		want[k] = v
	}
	var rows []mutation
	for _, k := range slices.Sorted(maps.Keys(frozen)) {
		if v := frozen[k]; v == nil {
			rows = append(rows, mutation{key: k, delete: true})
			delete(want, k)
		} else {
			rows = append(rows, mutation{key: k, vals: v})
			want[k] = v
		}
	}
	return &layerFixture{l: l, layer: &frozenLayer{rows: rows, under: mt}, want: want}
}

func (fx *layerFixture) checkGet(t *testing.T, keys []string) {
	t.Helper()
	got := map[int]Row{}
	if err := fx.layer.get(keys, func(i int, v Row) {
		if _, dup := got[i]; dup {
			t.Fatalf("get: key %d found twice", i)
		}
		got[i] = v
	}); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if w, ok := fx.want[k]; ok != (got[i] != nil) || ok && !w.Equal(got[i]) {
			t.Fatalf("get %x: %v, want %v (present %v)", k, got[i], w, ok)
		}
	}
}

func (fx *layerFixture) checkPrefixes(t *testing.T, prefixes []string) {
	t.Helper()
	var got []string
	if err := fx.layer.scanPrefixes(prefixes, func(i int, e entry) {
		if !strings.HasPrefix(e.key, prefixes[i]) {
			t.Fatalf("prefix scan: %x under prefix %d", e.key, i)
		}
		got = append(got, fmt.Sprintf("%d %x %v", i, e.key, e.vals))
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, p := range prefixes {
		for _, k := range slices.Sorted(maps.Keys(fx.want)) {
			if strings.HasPrefix(k, p) {
				want = append(want, fmt.Sprintf("%d %x %v", i, k, fx.want[k]))
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("prefix scan of %d prefixes:\n got %q\nwant %q", len(prefixes), got, want)
	}
}

// checkScan reads [from, to), stopping after limit rows (< 0: none).
func (fx *layerFixture) checkScan(t *testing.T, from, to string, limit int) {
	t.Helper()
	var got []string
	if err := fx.layer.scan(from, to, func(e entry) bool {
		got = append(got, fmt.Sprintf("%x %v", e.key, e.vals))
		return len(got) != limit
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range slices.Sorted(maps.Keys(fx.want)) {
		if k >= from && (to == "" || k < to) && len(want) != limit {
			want = append(want, fmt.Sprintf("%x %v", k, fx.want[k]))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scan [%x, %x) limit %d:\n got %q\nwant %q", from, to, limit, got, want)
	}
}

// The named cases: an upsert overrides, a tombstone hides, a frozen-only row
// appears, in point reads, prefix reads and range reads, and a range read
// stops where its callback says.
func TestFrozenLayerCases(t *testing.T) {
	var keys layerFixture
	_, keys.l = boundsLayouts(t)
	k := keys.full
	fx := newLayerFixture(t,
		map[string]Row{k(1, 10, "a"): {Int(1)}, k(1, 10, "b"): {Int(2)}, k(1, 20, "a"): {Int(3)}, k(2, 5, "x"): {Int(4)}},
		map[string]Row{k(1, 10, "b"): {Int(20)}, k(1, 10, "c"): {Int(30)}, k(1, 20, "a"): nil, k(1, 30, "q"): {Int(5)}, k(3, 1, "z"): nil},
	)
	p := fx.prefix
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"committed only", []string{k(1, 10, "a")}},
		{"upsert overrides", []string{k(1, 10, "b")}},
		{"frozen only", []string{k(1, 10, "c"), k(1, 30, "q")}},
		{"tombstone hides", []string{k(1, 20, "a")}},
		{"tombstone of nothing", []string{k(3, 1, "z")}},
		{"absent everywhere", []string{k(0, 1, "a"), k(1, 15, "a"), k(9, 9, "z")}},
		{"all at once", []string{k(0, 1, "a"), k(1, 10, "a"), k(1, 10, "b"), k(1, 10, "c"), k(1, 20, "a"), k(1, 30, "q"), k(2, 5, "x"), k(3, 1, "z")}},
	} {
		t.Run("get/"+c.name, func(t *testing.T) { fx.checkGet(t, c.keys) })
	}
	for _, c := range []struct {
		name     string
		prefixes []string
	}{
		{"merged prefix", []string{p(1, 10)}},
		{"prefix emptied by a tombstone", []string{p(1, 20)}},
		{"frozen-only prefix", []string{p(1, 30)}},
		{"frozen prefixes around a committed one", []string{p(1, 10), p(1, 20), p(1, 30), p(2, 5), p(3, 1)}},
		{"empty prefixes", []string{p(0, 0), p(1, 11), p(9, 9)}},
	} {
		t.Run("prefixes/"+c.name, func(t *testing.T) { fx.checkPrefixes(t, c.prefixes) })
	}
	for _, c := range []struct {
		name     string
		from, to string
		limit    int
	}{
		{"everything", "", "", -1},
		{"one key's rows", p(1, 10), prefixEnd(p(1, 10)), -1},
		{"from inside a key", k(1, 10, "b"), prefixEnd(p(1, 10)), -1},
		{"to inside a key", p(1, 10), k(1, 10, "c"), -1},
		{"stop on a frozen row", "", "", 2},
		{"stop on a committed row", "", "", 1},
		{"stop in the frozen tail", p(1, 25), "", 1},
		{"empty range", p(1, 40), p(2, 0), -1},
	} {
		t.Run("scan/"+c.name, func(t *testing.T) { fx.checkScan(t, c.from, c.to, c.limit) })
	}
}

// Random committed rows and frozen rows over a small key space: every read
// agrees with the merged model.
func TestFrozenLayerRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 200 {
		var fx0 layerFixture
		_, fx0.l = boundsLayouts(t)
		under, frozen := map[string]Row{}, map[string]Row{}
		var all, prefixes []string
		for kg := int32(0); kg < 3; kg++ {
			for k := int64(0); k < 4; k++ {
				prefixes = append(prefixes, fx0.prefix(kg, k))
				for _, s := range []string{"a", "b", "c"} {
					key := fx0.full(kg, k, s)
					all = append(all, key)
					if r.IntN(3) == 0 {
						under[key] = Row{Int(r.Int64N(100))}
					}
					switch r.IntN(4) {
					case 0:
						frozen[key] = Row{Int(100 + r.Int64N(100))}
					case 1:
						frozen[key] = nil
					}
				}
			}
		}
		fx := newLayerFixture(t, under, frozen)
		slices.Sort(all)
		slices.Sort(prefixes)
		pick := func(from []string) []string {
			var out []string
			for _, s := range from {
				if r.IntN(2) == 0 {
					out = append(out, s)
				}
			}
			return out
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			fx.checkGet(t, pick(all))
			fx.checkPrefixes(t, pick(prefixes))
			from, to := all[r.IntN(len(all))], ""
			if r.IntN(2) == 0 {
				to = all[r.IntN(len(all))]
			}
			fx.checkScan(t, from, to, -1)
			fx.checkScan(t, "", "", 1+r.IntN(10))
		})
	}
}

func TestFoldRows(t *testing.T) {
	m := func(key string, v int64, del bool) mutation {
		if del {
			return mutation{key: key, delete: true}
		}
		return mutation{key: key, vals: Row{Int(v)}}
	}
	older := []mutation{m("a", 1, false), m("c", 3, false), m("d", 0, true), m("f", 6, false)}
	newer := []mutation{m("b", 20, false), m("c", 0, true), m("d", 40, false), m("g", 70, false)}
	got := foldRows(newer, older)
	want := []mutation{m("a", 1, false), m("b", 20, false), m("c", 0, true), m("d", 40, false), m("f", 6, false), m("g", 70, false)}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].key != want[i].key || got[i].delete != want[i].delete || !got[i].vals.Equal(want[i].vals) {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := foldRows(newer, nil); len(got) != len(newer) {
		t.Fatalf("fold over nothing: %d rows", len(got))
	}
}
