package subtask_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// A SUM+COUNT aggregate over changelog bundles, a barrier after each and a
// restore in the middle, matches a plain map.
func TestGroupAggregateMatchesReferenceAcrossBarriers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		ref := map[int64][2]int64{}
		r := rand.New(rand.NewPCG(7, 7))
		var out []subtask.Row
		for bundle := 0; bundle < 6; bundle++ {
			deltas := map[int64][2]int64{}
			for i := 0; i < 300; i++ {
				k := int64(r.IntN(60))
				v := int64(r.IntN(100))
				c := int64(1)
				if cur := ref[k][1] + deltas[k][1]; cur > 0 && r.IntN(3) == 0 {
					v, c = -v, -1 // a retraction
				}
				d := deltas[k]
				deltas[k] = [2]int64{d[0] + v, d[1] + c}
			}
			ks := slices.Sorted(func(yield func(int64) bool) {
				for k := range deltas {
					if !yield(k) {
						return
					}
				}
			})
			out = must[[]subtask.Row](t)(agg.GetBatch(keys(ks...), out))
			for i, k := range ks {
				var cur [2]int64
				if out[i] != nil {
					cur = [2]int64{out[i][0].Int(), out[i][1].Int()}
				}
				if cur != ref[k] {
					t.Fatalf("bundle %d key %d: state %v, reference %v", bundle, k, cur, ref[k])
				}
				next := [2]int64{cur[0] + deltas[k][0], cur[1] + deltas[k][1]}
				if next[1] == 0 {
					agg.Delete(key(k))
					delete(ref, k)
				} else {
					agg.Put(key(k), row(next[0], next[1]))
					ref[k] = next
				}
			}
			h.store.EndBatch()
			if bundle == 3 {
				h.restore()
			} else {
				h.flush()
			}
		}
		all := make([]int64, 60)
		for i := range all {
			all[i] = int64(i)
		}
		out = must[[]subtask.Row](t)(agg.GetBatch(keys(all...), out))
		for i, k := range all {
			want, ok := ref[k]
			if (out[i] != nil) != ok || (ok && (out[i][0].Int() != want[0] || out[i][1].Int() != want[1])) {
				t.Fatalf("final key %d: state %v, reference %v (present %v)", k, out[i], want, ok)
			}
		}
	})
}

// Within a batch, read rows stay; after EndBatch only written keys stay
// buffered, and a re-read of a clean key probes the table again.
func TestBatchKeepsOnlyWrittenKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		agg.Put(key(1), row(1, 1))
		agg.Put(key(2), row(2, 1))
		h.flush()

		before := h.store.Stats()
		got := must[[]subtask.Row](t)(agg.GetBatch(keys(1, 2, 1), nil))
		if got[0][0].Int() != 1 || got[1][0].Int() != 2 || got[2][0].Int() != 1 {
			t.Fatalf("read %v", got)
		}
		if st := h.store.Stats(); st.Probes != before.Probes+1 || st.ProbedKeys != before.ProbedKeys+2 {
			t.Fatalf("one probe of 2 distinct keys expected, stats went %+v -> %+v", before, st)
		}
		agg.Put(key(1), row(11, 2))
		// A second read in the same batch is served by the buffer.
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(2, 1), got))
		if got[0][0].Int() != 2 || got[1][0].Int() != 11 {
			t.Fatalf("read in batch %v", got)
		}
		h.store.EndBatch()
		if n := h.store.Buffered(); n != 1 {
			t.Fatalf("%d keys buffered after the batch, want 1 (the written key)", n)
		}
		before = h.store.Stats()
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(1), got))
		if got[0][0].Int() != 11 || h.store.Stats().Probes != before.Probes {
			t.Fatalf("written key read %v with stats %+v -> %+v", got, before, h.store.Stats())
		}
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(2), got))
		if got[0][0].Int() != 2 || h.store.Stats().Probes != before.Probes+1 {
			t.Fatalf("clean key must be probed again: read %v, stats %+v -> %+v", got, before, h.store.Stats())
		}
	})
}

// Restoring from a checkpoint continues from its state; later writes of the
// restored store apply on top.
func TestRestoreContinuesFromTheCheckpoint(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		agg.Put(key(1), row(10, 1))
		agg.Put(key(2), row(25, 1))
		agg.Put(key(3), row(30, 1))
		cp1 := h.flush()
		if tc := cp1.Tables[0]; tc.Upserts != 3 || tc.Tombstones != 0 {
			t.Fatalf("checkpoint 1 wrote %+v", tc)
		}
		agg.Put(key(3), row(31, 2))
		h.restore()
		got := must[[]subtask.Row](t)(agg.GetBatch(keys(1, 2, 3), nil))
		want := []subtask.Row{row(10, 1), row(25, 1), row(31, 2)}
		for i := range want {
			if !got[i].Equal(want[i]) {
				t.Fatalf("after restore key %d = %v, want %v", i+1, got[i], want[i])
			}
		}
		agg.DeleteBatch(keys(1))
		agg.PutBatch(keys(2), []subtask.Row{row(125, 2)})
		cp := h.flush()
		if tc := cp.Tables[0]; tc.Upserts != 1 || tc.Tombstones != 1 {
			t.Fatalf("flush wrote %+v, want 1 upsert and 1 tombstone", tc)
		}
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(1, 2, 3), got))
		if got[0] != nil || !got[1].Equal(row(125, 2)) || !got[2].Equal(row(31, 2)) {
			t.Fatalf("after updates: %v", got)
		}
	})
}

// A deleted key stays deleted across a checkpoint and restore; inserting it
// again starts fresh.
func TestTombstonesAreDurable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		agg.Put(key(7), row(70, 1))
		h.flush()
		got := must[[]subtask.Row](t)(agg.GetBatch(keys(7), nil))
		if got[0] == nil {
			t.Fatal("key 7 absent after its flush")
		}
		agg.Delete(key(7))
		h.restore()
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(7), got))
		if got[0] != nil {
			t.Fatalf("deleted key 7 reads %v after restore", got[0])
		}
		agg.Put(key(7), row(5, 1))
		h.flush()
		got = must[[]subtask.Row](t)(agg.GetBatch(keys(7), got))
		if !got[0].Equal(row(5, 1)) {
			t.Fatalf("re-inserted key 7 reads %v", got[0])
		}
	})
}

// Flushes with nothing written commit nothing; writes that restore the
// committed row, and deletes of absent keys, write nothing either.
func TestFlushWritesNothingWithoutChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		agg.Put(key(1), row(1, 1))
		first := h.flush()
		a, b := h.flush(), h.flush()
		for _, cp := range []subtask.Checkpoint{a, b} {
			if tc := cp.Tables[0]; tc.Committed || tc.Upserts+tc.Tombstones != 0 || tc.Snapshot != first.Tables[0].Snapshot {
				t.Fatalf("empty flush committed %+v (first flush %+v)", tc, first.Tables[0])
			}
		}
		must[[]subtask.Row](t)(agg.GetBatch(keys(1, 2), nil))
		agg.Put(key(1), row(9, 9))
		agg.Put(key(1), row(1, 1))
		agg.Delete(key(2))
		if tc := h.flush().Tables[0]; tc.Committed {
			t.Fatalf("reverted write and delete of an absent key committed %+v", tc)
		}
	})
}

// Writes after a GetBatch land on their keys whatever their order against
// the batch's (in order, skipping keys, backwards, repeated keys, keys the
// batch did not read), across batches and flushes: the state matches a map.
func TestWritesAfterReadsMatchReference(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bc backendCase) {
		var agg *subtask.ValueState
		h := newHarness(t, bc, func(s *subtask.Store) { agg = must[*subtask.ValueState](t)(s.Value(aggLayout(0))) })
		ref := map[int64]int64{}
		r := rand.New(rand.NewPCG(5, 6))
		var out []subtask.Row
		for batch := range 120 {
			ks := make([]int64, 1+r.IntN(40))
			for i := range ks {
				ks[i] = int64(r.IntN(50))
			}
			out = must[[]subtask.Row](t)(agg.GetBatch(keys(ks...), out))
			for i, k := range ks {
				v, ok := ref[k]
				if (out[i] != nil) != ok || ok && out[i][0].Int() != v {
					t.Fatalf("batch %d: key %d reads %v, want %d (present %v)", batch, k, out[i], v, ok)
				}
			}
			writes := slices.Clone(ks)
			switch r.IntN(3) {
			case 0: // in order, some skipped
			case 1:
				slices.Reverse(writes)
			default:
				r.Shuffle(len(writes), func(i, j int) { writes[i], writes[j] = writes[j], writes[i] })
			}
			writes = append(writes, int64(r.IntN(60))) // perhaps not read
			for _, k := range writes {
				switch n := r.IntN(4); n {
				case 0:
				case 1:
					agg.Delete(key(k))
					delete(ref, k)
				default:
					v := int64(batch*1000 + n)
					agg.Put(key(k), row(v, 1))
					ref[k] = v
				}
			}
			h.store.EndBatch()
			if batch%10 == 9 {
				h.flush()
			}
		}
	})
}
