package subtask_test

import (
	"fmt"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// Keys that outgrow their entry arrays while the last interval is frozen:
// the frozen entries (the images the new entries start from) and every
// other key's entries stay as written, though grown keys hand their old
// arrays on to the next key that grows.
func TestMapGrowthKeepsFrozenAndOtherKeys(t *testing.T) {
	var bc backendCase
	for _, c := range backendCases {
		if c.name == "paimon" {
			bc = c
		}
	}
	var m *subtask.MapState
	h := newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(0))) })
	want := map[int64]map[string]int64{}
	put := func(me *subtask.MapEntries, k int64, e string, v int64) {
		me.Put(sub(e), row(v))
		if want[k] == nil {
			want[k] = map[string]int64{}
		}
		want[k][e] = v
	}
	check := func(when string) {
		t.Helper()
		for k, w := range want {
			got := entriesOf(t, m, k)
			if len(got) != len(w) {
				t.Fatalf("%s: key %d has %d entries, want %d", when, k, len(got), len(w))
			}
			for e, v := range w {
				if got[e] != v {
					t.Fatalf("%s: key %d entry %s = %d, want %d", when, k, e, got[e], v)
				}
			}
		}
		h.store.EndBatch()
	}

	mes := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2), nil))
	for e := range 3 {
		put(mes[0], 1, fmt.Sprintf("e%03d", e), 1)
		put(mes[1], 2, fmt.Sprintf("e%03d", e), 2)
	}
	h.store.EndBatch()
	first := must[*subtask.FrozenFlush](t)(h.store.Freeze(1))

	// Key 1 grows from its frozen image through several arrays, key 3 from
	// nothing after it, taking the arrays key 1 left; key 2 is read only.
	// Inserts go in front, between and behind the entries.
	mes = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1, 2, 3), nil))
	for i := range 100 {
		e := fmt.Sprintf("e%03d", (i*37)%100+3)
		put(mes[0], 1, e, int64(10+i))
		put(mes[2], 3, e, int64(20+i))
	}
	put(mes[0], 1, "e001", 99)
	h.store.EndBatch()
	check("frozen flush held")

	cp := must[subtask.Checkpoint](t)(first.Commit())
	if tc := cp.Tables[0]; tc.Upserts != 6 || tc.Tombstones != 0 {
		t.Fatalf("frozen flush committed %+v, want the 6 entries of its interval", tc)
	}
	if err := h.store.Release(first, true, nil); err != nil {
		t.Fatal(err)
	}
	check("frozen flush released")
	h.restore()
	check("restored")
}
