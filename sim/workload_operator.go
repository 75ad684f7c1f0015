package sim

import (
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// The keyed operator's states: one of every store kind.
var (
	aggLayout = subtask.Layout{
		Name:  "agg",
		Kind:  subtask.KindValue,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "n", Type: table.BigInt()}, {Name: "s", Type: table.BigInt()}},
	}
	lastLayout = subtask.Layout{
		Name:  "last",
		Kind:  subtask.KindList,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}, {Name: "o", Type: table.BigInt()}},
	}
	subsLayout = subtask.Layout{
		Name:  "subs",
		Kind:  subtask.KindMap,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub:   []subtask.Column{{Name: "sub", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "n", Type: table.BigInt()}},
	}
	winLayout = subtask.Layout{
		Name:  "win",
		Kind:  subtask.KindTime,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
	}
)

// operator is the keyed operator's logic over one subtask's store: per key a
// count and sum (value), the last events (list), counts per sub-key (map) and
// a time-ordered window with range reads and deletes of old rows (time).
type operator struct {
	store *subtask.Store
	maxP  int
	agg   *subtask.ValueState
	last  *subtask.ListState
	subs  *subtask.MapState
	win   *subtask.TimeState

	keys  []subtask.Key
	rows  []subtask.Row
	lists [][]subtask.Row
	maps  []*subtask.MapEntries
}

// registerStates registers the operator's states on a store.
func registerStates(store *subtask.Store, maxP int) (*operator, error) {
	op := &operator{store: store, maxP: maxP, keys: make([]subtask.Key, 1)}
	var err error
	if op.agg, err = store.Value(aggLayout); err != nil {
		return nil, err
	}
	if op.last, err = store.List(lastLayout); err != nil {
		return nil, err
	}
	if op.subs, err = store.Map(subsLayout); err != nil {
		return nil, err
	}
	if op.win, err = store.Time(winLayout); err != nil {
		return nil, err
	}
	return op, nil
}

func keyGroupOf(key int64, maxP int) int {
	return keygroup.ForKeyHash(int32(key), maxP)
}

func (op *operator) key(k int64) subtask.Key {
	return subtask.Key{Group: int32(keyGroupOf(k, op.maxP)), Cols: subtask.Row{subtask.Int(k)}}
}

// process applies a batch of events, in order, and returns their output
// records. The batch's keys are read with one probe per state; the window
// is read per event, since each event's range depends on the rows the
// events before it wrote.
func (op *operator) process(batch []event) ([]record, error) {
	defer op.store.EndBatch()
	op.keys = op.keys[:0]
	at := map[int64]int{}
	for _, e := range batch {
		if _, ok := at[e.Key]; !ok {
			at[e.Key] = len(op.keys)
			op.keys = append(op.keys, op.key(e.Key))
		}
	}
	var err error
	if op.rows, err = op.agg.GetBatch(op.keys, op.rows); err != nil {
		return nil, fmt.Errorf("agg read: %w", err)
	}
	if op.lists, err = op.last.GetBatch(op.keys, op.lists); err != nil {
		return nil, fmt.Errorf("list read: %w", err)
	}
	if op.maps, err = op.subs.GetBatch(op.keys, op.maps); err != nil {
		return nil, fmt.Errorf("map read: %w", err)
	}
	counts := make([][2]int64, len(op.keys))
	lasts := make([][][2]int64, len(op.keys))
	for i := range op.keys {
		if r := op.rows[i]; r != nil {
			counts[i] = [2]int64{r[0].Int(), r[1].Int()}
		}
		for _, r := range op.lists[i] {
			lasts[i] = append(lasts[i], [2]int64{r[0].Int(), r[1].Int()})
		}
	}
	out := make([]record, 0, len(batch))
	for _, e := range batch {
		i := at[e.Key]
		k := op.keys[i]
		counts[i][0]++
		counts[i][1] += e.Val
		last := append(lasts[i], [2]int64{e.Val, e.Off})
		if len(last) > listLen {
			last = append([][2]int64(nil), last[len(last)-listLen:]...)
		}
		lasts[i] = last

		me := op.maps[i]
		sub := subtask.Row{subtask.Int(e.Val % subKeys)}
		var subCount int64
		if r, ok := me.Get(sub); ok {
			subCount = r[0].Int()
		}
		subCount++
		me.Put(sub, subtask.Row{subtask.Int(subCount)})

		op.win.Put(k, e.Time, e.Off, subtask.Row{subtask.Int(e.Val)})
		var ws, wn int64
		if err := op.win.Range(k, e.Time-windowSpan, e.Time, func(r subtask.TimeRow) bool {
			ws += r.Value[0].Int()
			wn++
			return true
		}); err != nil {
			return nil, fmt.Errorf("window read: %w", err)
		}
		if cut := e.Time - windowRetain - 1; cut >= 0 && e.Off%windowCleanEvery == 0 {
			var old []subtask.TimeRow
			if err := op.win.Range(k, 0, cut, func(r subtask.TimeRow) bool {
				old = append(old, r)
				return true
			}); err != nil {
				return nil, fmt.Errorf("window read: %w", err)
			}
			for _, r := range old {
				op.win.Delete(k, r.Time, r.Seq)
			}
		}
		out = append(out, record{Off: e.Off, Text: output(e, counts[i][0], counts[i][1], last, me.Len(), subCount, ws, wn)})
	}
	for i, k := range op.keys {
		op.agg.Put(k, subtask.Row{subtask.Int(counts[i][0]), subtask.Int(counts[i][1])})
		list := make([]subtask.Row, len(lasts[i]))
		for j, l := range lasts[i] {
			list[j] = subtask.Row{subtask.Int(l[0]), subtask.Int(l[1])}
		}
		op.last.Put(k, list)
	}
	return out, nil
}

// stateOf reads the whole state of one key, in the model's shape.
func (op *operator) stateOf(key int64) (*keyState, error) {
	defer op.store.EndBatch()
	k := op.key(key)
	op.keys = append(op.keys[:0], k)
	var err error
	if op.rows, err = op.agg.GetBatch(op.keys, op.rows); err != nil {
		return nil, err
	}
	if op.lists, err = op.last.GetBatch(op.keys, op.lists); err != nil {
		return nil, err
	}
	if op.maps, err = op.subs.GetBatch(op.keys, op.maps); err != nil {
		return nil, err
	}
	ks := &keyState{subs: map[int64]int64{}}
	if r := op.rows[0]; r != nil {
		ks.count, ks.sum = r[0].Int(), r[1].Int()
	}
	for _, r := range op.lists[0] {
		ks.last = append(ks.last, [2]int64{r[0].Int(), r[1].Int()})
	}
	for s, v := range op.maps[0].All() {
		ks.subs[s[0].Int()] = v[0].Int()
	}
	err = op.win.Range(k, 0, 1<<62, func(r subtask.TimeRow) bool {
		ks.win = append(ks.win, winRow{r.Time, r.Seq, r.Value[0].Int()})
		return true
	})
	return ks, err
}

// sameState compares a key's state with the model's.
func sameState(a, b *keyState) bool {
	if a == nil {
		a = &keyState{}
	}
	if b == nil {
		b = &keyState{}
	}
	if a.count != b.count || a.sum != b.sum || len(a.last) != len(b.last) || len(a.subs) != len(b.subs) || len(a.win) != len(b.win) {
		return false
	}
	for i := range a.last {
		if a.last[i] != b.last[i] {
			return false
		}
	}
	for k, v := range a.subs {
		if b.subs[k] != v {
			return false
		}
	}
	for i := range a.win {
		if a.win[i] != b.win[i] {
			return false
		}
	}
	return true
}
