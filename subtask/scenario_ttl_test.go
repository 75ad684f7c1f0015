package subtask_test

import (
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
)

func readValue(t *testing.T, v *subtask.ValueState, k int64) subtask.Row {
	t.Helper()
	return must[[]subtask.Row](t)(v.GetBatch(keys(k), nil))[0]
}

// A row written at t with ttl d reads as absent from t+d on (inclusive); the
// read tombstones it, and the tombstone is durable: reopened with a clock
// before the expiry, the key is still absent.
func TestTTLExpiresInclusivelyAndTombstones(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(1000))) })
		h.store.SetNow(5000)
		agg.Put(key(1), row(10, 1))
		agg.Put(key(2), row(20, 1))
		h.flush()
		h.store.SetNow(5999)
		if got := readValue(t, agg, 1); !got.Equal(row(10, 1)) {
			t.Fatalf("at 5999 key 1 = %v", got)
		}
		h.store.EndBatch()
		h.store.SetNow(6000)
		if got := readValue(t, agg, 1); got != nil {
			t.Fatalf("at 6000 key 1 = %v, want expired", got)
		}
		if tc := h.flush().Tables[0]; tc.Upserts != 0 || tc.Tombstones != 1 {
			t.Fatalf("expiry on read flushed %+v, want exactly one tombstone", tc)
		}
		h.store.SetNow(5500)
		h.restore()
		if got := readValue(t, agg, 1); got != nil {
			t.Fatalf("expired key 1 resurrected at 5500 after restore: %v", got)
		}
		if got := readValue(t, agg, 2); !got.Equal(row(20, 1)) {
			t.Fatalf("key 2 at 5500 = %v", got)
		}
	})
}

// Write times are absolute: a restore neither refreshes nor shifts them, and
// a buffered row expires like a committed one.
func TestTTLTimestampsAreAbsoluteAcrossRestore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(1000))) })
		h.store.SetNow(5000)
		agg.Put(key(1), row(10, 1))
		h.restore()
		h.store.SetNow(5999)
		if got := readValue(t, agg, 1); !got.Equal(row(10, 1)) {
			t.Fatalf("at 5999 after restore key 1 = %v", got)
		}
		agg.Put(key(1), row(15, 2)) // written at 5999
		h.store.EndBatch()
		h.store.SetNow(6998)
		if got := readValue(t, agg, 1); !got.Equal(row(15, 2)) {
			t.Fatalf("buffered row at 6998 = %v", got)
		}
		h.store.SetNow(6999)
		if got := readValue(t, agg, 1); got != nil {
			t.Fatalf("buffered row at 6999 = %v, want expired", got)
		}
	})
}

// Per-entry map expiry: only the expired entry goes, as exactly one
// tombstone that survives a reopen before its expiry; a write refreshing only
// the clock is persisted.
func TestTTLMapExpiresPerEntry(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var m *subtask.MapState
		h := newHarness(t, bc, func(s *subtask.Store) { m = must[*subtask.MapState](t)(s.Map(joinLayout(1000))) })
		h.store.SetNow(5000)
		me := must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		me.Put(sub("a"), row(1))
		h.store.SetNow(5600)
		me.Put(sub("b"), row(2))
		h.flush()
		h.store.SetNow(6000)
		if got := entriesOf(t, m, 1); len(got) != 1 || got["b"] != 2 {
			t.Fatalf("entries at 6000: %v", got)
		}
		if tc := h.flush().Tables[0]; tc.Upserts != 0 || tc.Tombstones != 1 {
			t.Fatalf("per-entry expiry flushed %+v", tc)
		}
		h.store.SetNow(5500)
		h.restore()
		if got := entriesOf(t, m, 1); len(got) != 1 || got["b"] != 2 {
			t.Fatalf("entries reopened at 5500: %v", got)
		}
		h.store.EndBatch()
		h.store.SetNow(6100)
		me = must[[]*subtask.MapEntries](t)(m.GetBatch(keys(1), nil))[0]
		me.Put(sub("b"), row(2))
		if tc := h.flush().Tables[0]; tc.Upserts != 1 {
			t.Fatalf("clock refresh flushed %+v, want 1 upsert", tc)
		}
		h.store.SetNow(7000)
		if got := entriesOf(t, m, 1); len(got) != 1 {
			t.Fatalf("refreshed entry at 7000: %v", got)
		}
	})
}

// List elements and time-ordered rows expire on read on their own.
func TestTTLListAndTimeRows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var l *subtask.ListState
		var ts *subtask.TimeState
		h := newHarness(t, bc, func(s *subtask.Store) {
			lay := topLayout()
			lay.TTL = 1000
			l = must[*subtask.ListState](t)(s.List(lay))
			ts = must[*subtask.TimeState](t)(s.Time(windowLayout(1000)))
		})
		h.store.SetNow(1000)
		l.Put(key(1), []subtask.Row{srow(1, "old")})
		ts.Put(key(1), 5, 0, row(5))
		h.flush()
		h.store.SetNow(1500)
		old := listOf(t, l, 1)
		l.Put(key(1), append(old, srow(2, "new")))
		ts.Put(key(1), 6, 0, row(6))
		h.flush()
		h.store.SetNow(2000)
		if got := listOf(t, l, 1); len(got) != 2 {
			t.Fatalf("a rewrite stamps every element: list at 2000 = %v", got)
		}
		if got := rangeOf(t, ts, 1, 0, 10); !sameRows(got, []trow{{6, 0, 6}}) {
			t.Fatalf("time rows at 2000 = %v", got)
		}
		if tc := h.flush().Tables[1]; tc.Tombstones != 1 {
			t.Fatalf("expired time row flushed %+v, want its tombstone", tc)
		}
		h.store.SetNow(2500)
		if got := listOf(t, l, 1); len(got) != 0 {
			t.Fatalf("list at 2500 = %v", got)
		}
		if tc := h.flush().Tables[0]; tc.Tombstones != 2 {
			t.Fatalf("expired list flushed %+v", tc)
		}
	})
}

// clipStage restores `from` (checkpointed backends) into p new stores, one per
// subtask range, and returns them.
func clipStage(t *testing.T, bc backendCase, from []subtask.Backend, p int, now int64, setup func(*subtask.Store)) []*subtask.Store {
	t.Helper()
	out := make([]*subtask.Store, p)
	for i := range out {
		b := bc.fresh(t)
		t.Cleanup(func() { b.Close() })
		s := subtask.NewStore(b)
		s.SetNow(now)
		setup(s)
		if err := s.Clip(from, keygroup.RangeForSubtask(maxParallelism, p, i)); err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// checkpointAll flushes stores and returns backends restored from the
// checkpoints.
func checkpointAll(t *testing.T, bc backendCase, stores []*subtask.Store) []subtask.Backend {
	t.Helper()
	out := make([]subtask.Backend, len(stores))
	for i, s := range stores {
		cp, err := s.Flush(100)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = bc.restore(t, s.Backend(), cp)
		t.Cleanup(func() { out[i].Close() })
	}
	return out
}

// Rescale by clipping: 1→2 keeps exactly the keys of each range; a chain
// 1→2→3→1 keeps every key exactly once with its value, in every state kind;
// a clip skips rows already expired and keeps write times as they were.
func TestClipRescaleChain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var aggs []*subtask.ValueState
		var maps []*subtask.MapState
		setup := func(s *subtask.Store) {
			aggs = append(aggs, must[*subtask.ValueState](t)(s.Value(aggLayout(1000))))
			maps = append(maps, must[*subtask.MapState](t)(s.Map(joinLayout(0))))
		}
		const n = 64
		src := subtask.NewStore(bc.fresh(t))
		setup(src)
		src.SetNow(5000)
		all := make([]int64, n)
		for k := range all {
			all[k] = int64(k)
			if k == 0 {
				src.SetNow(4000) // key 0 expires at 5000
			}
			aggs[0].Put(key(int64(k)), row(int64(k)*10, 1))
			src.SetNow(5000)
			me := must[[]*subtask.MapEntries](t)(maps[0].GetBatch(keys(int64(k)), nil))[0]
			me.Put(sub("x"), row(int64(k)))
		}
		stage := checkpointAll(t, bc, []*subtask.Store{src})

		owner := func(k int64) int { return keygroup.SubtaskForKeyGroup(maxParallelism, 2, int(kgOf(k))) }
		for _, p := range []int{2, 3, 1} {
			aggs, maps = nil, nil
			stores := clipStage(t, bc, stage, p, 5000, setup)
			seen := make([]int, n)
			for i := range stores {
				vals := must[[]subtask.Row](t)(aggs[i].GetBatch(keys(all...), nil))
				mes := must[[]*subtask.MapEntries](t)(maps[i].GetBatch(keys(all...), nil))
				for k, v := range vals {
					r := keygroup.RangeForSubtask(maxParallelism, p, i)
					in := r.Contains(int(kgOf(int64(k))))
					if k == 0 {
						if v != nil {
							t.Fatalf("p=%d: expired key 0 survived the clip: %v", p, v)
						}
					} else if (v != nil) != in || (in && !v.Equal(row(int64(k)*10, 1))) {
						t.Fatalf("p=%d subtask %d range %v: key %d (kg %d) reads %v", p, i, r, k, kgOf(int64(k)), v)
					}
					if mes[k].Len() > 0 {
						seen[k]++
						if !in {
							t.Fatalf("p=%d subtask %d: map key %d outside its range", p, i, k)
						}
					}
				}
				stores[i].EndBatch()
			}
			for k, c := range seen {
				if c != 1 {
					t.Fatalf("p=%d: key %d held by %d subtasks", p, k, c)
				}
			}
			if p == 2 {
				counts := [2]int{}
				for _, k := range all[1:] {
					counts[owner(k)]++
				}
				if counts[0] == 0 || counts[1] == 0 {
					t.Fatalf("degenerate split %v", counts)
				}
			}
			stage = checkpointAll(t, bc, stores)
		}
		// Write times survived every clip: key 1 (written at 5000) expires at 6000.
		final := subtask.NewStore(stage[0])
		aggs = nil
		maps = nil
		setup(final)
		final.SetNow(5999)
		if got := must[[]subtask.Row](t)(aggs[0].GetBatch(keys(1), nil))[0]; got == nil {
			t.Fatal("key 1 expired early after three clips")
		}
		final.EndBatch()
		final.SetNow(6000)
		if got := must[[]subtask.Row](t)(aggs[0].GetBatch(keys(1), nil))[0]; got != nil {
			t.Fatalf("key 1 at 6000 after clips = %v", got)
		}
	})
}
