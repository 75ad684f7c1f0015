package subtask_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

func joinLayout(ttl int64) subtask.Layout {
	return subtask.Layout{
		Name:  "left",
		Key:   bigintKey,
		Sub:   []subtask.Column{{Name: "r", Type: table.String().NotNull()}},
		Value: []subtask.Column{{Name: "cnt", Type: table.BigInt()}},
		TTL:   ttl,
	}
}

func sub(s string) subtask.Row { return subtask.Row{subtask.Str(s)} }

func entriesOf(t *testing.T, m *subtask.MapState, k int64) map[string]int64 {
	t.Helper()
	me := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(k), nil))[0]
	out := map[string]int64{}
	for s, v := range me.All() {
		out[s[0].Str()] = v[0].Int()
	}
	return out
}

// A map flush writes only the entries that differ from the committed image.
func TestMapFlushesOnlyChangedEntries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var m *subtask.MapState
		h := newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(0))) })
		me := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		me.Put(sub("a"), row(1))
		me.Put(sub("b"), row(1))
		me.Put(sub("c"), row(1))
		if tc := h.flush().Tables[0]; tc.Upserts != 3 || tc.Tombstones != 0 {
			t.Fatalf("fresh key with 3 entries wrote %+v", tc)
		}

		me = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		me.Put(sub("b"), row(2))
		if tc := h.flush().Tables[0]; tc.Upserts != 1 || tc.Tombstones != 0 {
			t.Fatalf("one changed count wrote %+v", tc)
		}

		me = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		me.Put(sub("a"), row(5))
		me.Put(sub("a"), row(1))
		me.Delete(sub("c"))
		me.Put(sub("c"), row(1))
		if tc := h.flush().Tables[0]; tc.Committed {
			t.Fatalf("reverted changes wrote %+v", tc)
		}

		me = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		if !me.Delete(sub("c")) {
			t.Fatal("entry c missing")
		}
		if tc := h.flush().Tables[0]; tc.Upserts != 0 || tc.Tombstones != 1 {
			t.Fatalf("one removed entry wrote %+v", tc)
		}
		h.restore()
		got := entriesOf(t, m, 1)
		if len(got) != 2 || got["a"] != 1 || got["b"] != 2 {
			t.Fatalf("entries after restore: %v", got)
		}
	})
}

// Keys read in one batch keep their entries apart: a write to one key (a
// change, a removal, an insertion) leaves the others and their images as read.
func TestMapWritesStayWithTheirKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var m *subtask.MapState
		h := newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(0))) })
		mes := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2, 3, 4), nil))
		for _, me := range mes {
			for _, s := range []string{"a", "b", "c"} {
				me.Put(sub(s), row(1))
			}
		}
		h.flush()

		mes = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2, 3, 4), nil))
		mes[0].Put(sub("b"), row(9))
		mes[1].Delete(sub("a"))
		mes[2].Put(sub("bb"), row(7))
		want := []map[string]int64{
			{"a": 1, "b": 9, "c": 1},
			{"b": 1, "c": 1},
			{"a": 1, "b": 1, "bb": 7, "c": 1},
			{"a": 1, "b": 1, "c": 1},
		}
		check := func(when string) {
			t.Helper()
			for i, w := range want {
				got := entriesOf(t, m, int64(i+1))
				if len(got) != len(w) {
					t.Fatalf("%s: key %d entries %v, want %v", when, i+1, got, w)
				}
				for s, v := range w {
					if got[s] != v {
						t.Fatalf("%s: key %d entries %v, want %v", when, i+1, got, w)
					}
				}
			}
		}
		check("before the flush")
		if tc := h.flush().Tables[0]; tc.Upserts != 2 || tc.Tombstones != 1 {
			t.Fatalf("one change, one insertion and one removal wrote %+v", tc)
		}
		h.restore()
		check("after restore")
	})
}

// Entries read back what was written through any sequence of reads and
// writes, on interleaved handles (an entry is usually read and then written
// again, as a join does).
func TestMapEntriesFollowAModel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var m *subtask.MapState
		newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(0))) })
		mes := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2), nil))
		model := []map[string]int64{{}, {}}
		r := rand.New(rand.NewPCG(5, 6))
		s := "e0"
		for op := range 3000 {
			h := r.IntN(2)
			if r.IntN(3) == 0 {
				s = fmt.Sprintf("e%d", r.IntN(12))
			}
			me, want := mes[h], model[h]
			switch r.IntN(10) {
			case 0, 1, 2, 3:
				v, ok := me.Get(sub(s))
				if w, had := want[s]; ok != had || ok && v[0].Int() != w {
					t.Fatalf("op %d: Get(%s) = %v %v, want %d %v", op, s, v, ok, w, had)
				}
			case 4, 5, 6, 7:
				me.Put(sub(s), row(int64(op)))
				want[s] = int64(op)
			case 8:
				_, had := want[s]
				if me.Delete(sub(s)) != had {
					t.Fatalf("op %d: Delete(%s) != %v", op, s, had)
				}
				delete(want, s)
			default:
				if r.IntN(20) == 0 {
					me.Clear()
					clear(want)
				}
			}
			if me.Len() != len(want) {
				t.Fatalf("op %d: %d entries, want %d", op, me.Len(), len(want))
			}
		}
		for h, me := range mes {
			prev := ""
			for s, v := range me.All() {
				if s[0].Str() <= prev && prev != "" || model[h][s[0].Str()] != v[0].Int() {
					t.Fatalf("handle %d: entry %s=%v out of order or unlike the model", h, s[0].Str(), v)
				}
				prev = s[0].Str()
			}
		}
	})
}

// Map entries iterate in entry-key order and a handle outlives its batch only
// when written.
func TestMapEntriesOrderAndHandleLifetime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var m *subtask.MapState
		h := newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(0))) })
		mes := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2, 1), nil))
		if mes[0] != mes[2] {
			t.Fatal("a repeated key got two handles")
		}
		for _, s := range []string{"z", "a\x00", "a", "m"} {
			mes[0].Put(sub(s), row(int64(len(s))))
		}
		var order []string
		for s := range mes[0].All() {
			order = append(order, s[0].Str())
		}
		if want := []string{"a", "a\x00", "m", "z"}; len(order) != 4 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] || order[3] != want[3] {
			t.Fatalf("entry order %q, want %q", order, want)
		}
		h.store.EndBatch()
		mes[0].Put(sub("b"), row(1)) // written: still valid
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("a clean handle was usable after its batch ended")
				}
			}()
			mes[1].Len()
		}()
		h.flush()
		if got := entriesOf(t, m, 1); len(got) != 5 {
			t.Fatalf("entries %v", got)
		}
	})
}

func topLayout() subtask.Layout {
	return subtask.Layout{
		Name:  "top",
		Key:   bigintKey,
		Value: []subtask.Column{{Name: "score", Type: table.BigInt()}, {Name: "id", Type: table.String()}},
	}
}

func listOf(t *testing.T, l *subtask.ListState, k int64) []subtask.Row {
	t.Helper()
	return must[[][]subtask.Row](t)(l.GetBatch(keys(k), nil))[0]
}

func srow(score int64, id string) subtask.Row {
	return subtask.Row{subtask.Int(score), subtask.Str(id)}
}

// A list keeps its order across a restore; shrinking tombstones the vacated
// positions, removing the key tombstones all of them, and a rewrite writes
// only the positions that changed.
func TestListShrinkRemoveAndOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var l *subtask.ListState
		h := newHarness(t, bc, func(s *subtask.Store) { l = must[*subtask.ListState](t)(s.List(topLayout())) })
		// Ties in score keep insertion order.
		l.Put(key(1), []subtask.Row{srow(9, "x"), srow(5, "b"), srow(5, "a")})
		l.Put(key(2), []subtask.Row{srow(1, "q")})
		h.restore()
		got := listOf(t, l, 1)
		if len(got) != 3 || !got[0].Equal(srow(9, "x")) || !got[1].Equal(srow(5, "b")) || !got[2].Equal(srow(5, "a")) {
			t.Fatalf("list after restore: %v", got)
		}
		l.Put(key(1), []subtask.Row{srow(9, "x"), srow(7, "c"), srow(5, "b")})
		if tc := h.flush().Tables[0]; tc.Upserts != 2 || tc.Tombstones != 0 {
			t.Fatalf("rewrite of 2 of 3 positions wrote %+v", tc)
		}
		got = listOf(t, l, 1)
		l.Put(key(1), got[:1])
		if tc := h.flush().Tables[0]; tc.Upserts != 0 || tc.Tombstones != 2 {
			t.Fatalf("truncation to 1 wrote %+v", tc)
		}
		if got = listOf(t, l, 1); len(got) != 1 || !got[0].Equal(srow(9, "x")) {
			t.Fatalf("truncated list %v", got)
		}
		// A blind write (no read this interval) still tombstones the tail.
		h.store.EndBatch()
		h.flush()
		l.Delete(key(2))
		l.Put(key(1), nil)
		if tc := h.flush().Tables[0]; tc.Upserts != 0 || tc.Tombstones != 2 {
			t.Fatalf("removal of two one-element lists wrote %+v", tc)
		}
		h.restore()
		if a, b := listOf(t, l, 1), listOf(t, l, 2); len(a) != 0 || len(b) != 0 {
			t.Fatalf("removed lists read %v and %v", a, b)
		}
	})
}

func windowLayout(ttl int64) subtask.Layout {
	return subtask.Layout{
		Name:  "pending",
		Key:   bigintKey,
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
		TTL:   ttl,
	}
}

type trow struct{ time, seq, v int64 }

func rangeOf(t *testing.T, ts *subtask.TimeState, k, lo, hi int64) []trow {
	t.Helper()
	var out []trow
	err := ts.Range(key(k), lo, hi, func(r subtask.TimeRow) bool {
		out = append(out, trow{r.Time, r.Seq, r.Value[0].Int()})
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameRows(a, b []trow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Range reads merge committed rows with the buffer: buffered rows win,
// buffered deletes hide committed rows, bounds are inclusive.
func TestTimeRangeMergesBufferAndTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var ts *subtask.TimeState
		h := newHarness(t, bc, func(s *subtask.Store) { ts = must[*subtask.TimeState](t)(s.Time(windowLayout(0))) })
		ts.Put(key(1), 10, 0, row(100))
		ts.Put(key(1), 20, 0, row(200))
		ts.Put(key(1), 20, 1, row(201))
		ts.Put(key(1), -5, 0, row(-50))
		ts.Put(key(2), 15, 0, row(150))
		h.flush()
		ts.Put(key(1), 15, 0, row(151))
		ts.Delete(key(1), 10, 0)
		ts.Put(key(1), 20, 1, row(202))
		want := []trow{{15, 0, 151}, {20, 0, 200}, {20, 1, 202}}
		if got := rangeOf(t, ts, 1, 0, 20); !sameRows(got, want) {
			t.Fatalf("range [0,20] = %v, want %v", got, want)
		}
		if got := rangeOf(t, ts, 1, -100, 19); !sameRows(got, []trow{{-5, 0, -50}, {15, 0, 151}}) {
			t.Fatalf("range [-100,19] = %v", got)
		}
		// The widest range: no time is past its upper bound, buffered or committed.
		if got := rangeOf(t, ts, 1, math.MinInt64, math.MaxInt64); !sameRows(got, []trow{{-5, 0, -50}, {15, 0, 151}, {20, 0, 200}, {20, 1, 202}}) {
			t.Fatalf("range [MinInt64,MaxInt64] = %v", got)
		}
		// Stop early.
		n := 0
		if err := ts.Range(key(1), -100, 100, func(subtask.TimeRow) bool { n++; return n < 2 }); err != nil || n != 2 {
			t.Fatalf("early stop after %d rows: %v", n, err)
		}
		h.restore()
		if got := rangeOf(t, ts, 1, 0, 1<<62); !sameRows(got, want) {
			t.Fatalf("after restore range = %v, want %v", got, want)
		}
	})
}

// Firing a watermark scans every key's rows up to it and deletes them; the
// fired rows never fire again, within the interval, after a flush and after a
// restore.
func TestTimeScanFiresOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var ts *subtask.TimeState
		h := newHarness(t, bc, func(s *subtask.Store) { ts = must[*subtask.TimeState](t)(s.Time(windowLayout(0))) })
		fire := func(wm int64) []trow {
			var out []trow
			err := ts.Scan(-1<<62, wm, func(k subtask.Key, r subtask.TimeRow) bool {
				out = append(out, trow{k.Cols[0].Int(), r.Time, r.Value[0].Int()})
				ts.Delete(k, r.Time, r.Seq)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		ts.Put(key(1), 10, 0, row(1))
		ts.Put(key(2), 20, 0, row(2))
		h.flush()
		ts.Put(key(3), 5, 0, row(3))
		ts.Put(key(1), 25, 0, row(4))
		got := fire(15)
		if len(got) != 2 {
			t.Fatalf("fire(15) = %v, want key 1@10 and key 3@5", got)
		}
		if got := fire(15); len(got) != 0 {
			t.Fatalf("second fire(15) = %v", got)
		}
		h.flush()
		if got := fire(15); len(got) != 0 {
			t.Fatalf("fire(15) after flush = %v", got)
		}
		h.restore()
		got = fire(30)
		if len(got) != 2 || got[0] != (trow{1, 25, 4}) && got[1] != (trow{1, 25, 4}) {
			t.Fatalf("fire(30) after restore = %v", got)
		}
	})
}
