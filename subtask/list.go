package subtask

import (
	"fmt"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// ListState keeps an ordered list of rows per key, stored one row per
// position under PK [kg, key, ord]. A flush writes the positions that differ
// from the committed list and tombstones positions past the new end, so the
// order (top-N tie order, say) survives a restore exactly. With a TTL every
// element carries the time of the Put that wrote it and expires on read on its
// own.
//
// Lists handed to Put become the state's; lists GetBatch returns must not be
// modified.
type ListState struct {
	store  *Store
	l      *layout
	t      committedTable
	buf    arena[listSlot]
	clean  []int32
	nDirty int

	enc    []byte
	strs   strSlab     // the buffer's keys read by GetBatch
	misses []valueMiss // keys of a batch not in the buffer; idx is the slot
	late   []lateRead
	probe  []string
	found  []listImage
	// batchAt is the slot of every key of the last GetBatch, groupOf the
	// scratch of Groups.
	batchAt []int32
	groupOf []int32

	// frozen is the buffer of a frozen flush not yet released (nil: none);
	// spare is one released, kept for a later interval.
	frozen *frozenLists
	spare  arena[listSlot]
}

type listSlot struct {
	elems []Row
	ts    []int64 // per element; nil without a TTL
	image listImage
	known bool
	dirty bool
	// pending: added by the batch being read, its image not yet read.
	pending bool
}

// listImage is a list as the table holds it. Positions are 0..n-1 when
// the store wrote them; a clip that skipped expired elements can leave gaps,
// so the positions are kept and the list is the elements in position order.
type listImage struct {
	elems []Row
	ts    []int64
	ords  []int64
}

func newListState(s *Store, l *layout, t committedTable) *ListState {
	return &ListState{store: s, l: l, t: t, buf: newArena[listSlot]()}
}

func (ls *ListState) layout() *layout       { return ls.l }
func (ls *ListState) table() committedTable { return ls.t }
func (ls *ListState) buffered() int         { return ls.nDirty }

// Name is the state's name.
func (ls *ListState) Name() string { return ls.l.Name }

// GetBatch returns the list of every key (empty when absent), reading the keys
// the buffer lacks from the committed table with one prefix probe. The result
// reuses out's storage; lists stay readable until the batch ends.
//
// A key's first miss puts its slot in the buffer at once, so the batch's
// later records of the key find it there: only distinct keys are sorted for
// the probe.
func (ls *ListState) GetBatch(keys []Key, out [][]Row) ([][]Row, error) {
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	ls.misses, ls.late = ls.misses[:0], ls.late[:0]
	ls.batchAt = slices.Grow(ls.batchAt[:0], len(keys))[:len(keys)]
	for i, k := range keys {
		ls.enc = ls.l.AppendKey(ls.enc[:0], k)
		if at, ok := ls.buf.lookup(ls.enc); ok {
			ls.batchAt[i] = at
			if ls.buf.slots[at].pending {
				ls.late = append(ls.late, lateRead{idx: i, at: at})
				continue
			}
			ls.pruneExpired(at)
			out[i] = ls.buf.slots[at].elems
			continue
		}
		miss := newMiss(ls.strs.str(ls.enc), 0)
		at := ls.buf.add(miss.key)
		ls.buf.slots[at].pending = true
		ls.clean = append(ls.clean, at)
		ls.batchAt[i] = at
		ls.late = append(ls.late, lateRead{idx: i, at: at})
		miss.idx = int(at)
		ls.misses = append(ls.misses, miss)
	}
	if len(ls.misses) == 0 {
		return out, nil
	}
	sortMisses(ls.misses)
	ls.probe = distinctKeys(ls.probe[:0], ls.misses)
	if err := ls.images(ls.probe); err != nil {
		// The slots made for the batch's misses must not stay, unread, in
		// the buffer.
		for _, m := range ls.misses {
			ls.buf.drop(int32(m.idx))
		}
		ls.batchAt = ls.batchAt[:0]
		return nil, err
	}
	for j, m := range ls.misses {
		slot := &ls.buf.slots[m.idx]
		slot.image, slot.known, slot.pending = ls.found[j], true, false
		slot.elems, slot.ts = slot.image.elems, slot.image.ts
		ls.pruneExpired(int32(m.idx))
	}
	for _, r := range ls.late {
		out[r.idx] = ls.buf.slots[r.at].elems
	}
	return out, nil
}

// Groups returns the groups of the last GetBatch's keys, as
// [ValueState.Groups] does.
func (ls *ListState) Groups(of []int, first []int) ([]int, []int) {
	return slotGroups(ls.batchAt, len(ls.buf.slots), &ls.groupOf, of, first)
}

func distinctKeys(dst []string, misses []valueMiss) []string {
	for i, m := range misses {
		if i == 0 || m.key != misses[i-1].key {
			dst = append(dst, m.key)
		}
	}
	return dst
}

// readImages reads the committed lists of sorted, distinct prefixes into
// ls.found.
func (ls *ListState) readImages(prefixes []string) error {
	ls.found = slices.Grow(ls.found[:0], len(prefixes))[:len(prefixes)]
	clear(ls.found)
	ls.store.countProbe(len(prefixes))
	var bad error
	err := ls.t.scanPrefixes(prefixes, func(i int, e entry) {
		img := &ls.found[i]
		ord, n, err := decodeKeyDatum(e.key[len(prefixes[i]):], table.BigInt())
		if err == nil && len(prefixes[i])+n != len(e.key) {
			err = fmt.Errorf("%d bytes after the list position", len(e.key)-len(prefixes[i])-n)
		}
		if err != nil && bad == nil {
			bad = err
		}
		value, ts := splitVals(ls.l, e.vals)
		img.ords = append(img.ords, ord.Int())
		img.elems = append(img.elems, value)
		if ls.l.hasTTL() {
			img.ts = append(img.ts, ts)
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return fmt.Errorf("state %q: read of %d lists: %w", ls.l.Name, len(prefixes), err)
	}
	return nil
}

// pruneExpired drops a slot's expired elements; the flush then rewrites the
// list without them.
func (ls *ListState) pruneExpired(at int32) {
	slot := &ls.buf.slots[at]
	if !ls.l.hasTTL() {
		return
	}
	now := ls.store.now
	keep := -1
	for i, ts := range slot.ts {
		if expired(ls.l, ts, now) {
			keep = i
			break
		}
	}
	if keep < 0 {
		return
	}
	elems := slices.Clone(slot.elems[:keep])
	tss := slices.Clone(slot.ts[:keep])
	for i := keep; i < len(slot.elems); i++ {
		if !expired(ls.l, slot.ts[i], now) {
			elems = append(elems, slot.elems[i])
			tss = append(tss, slot.ts[i])
		}
	}
	slot.elems, slot.ts = elems, tss
	ls.markDirty(slot)
}

func (ls *ListState) markDirty(slot *listSlot) {
	if !slot.dirty {
		slot.dirty = true
		ls.nDirty++
	}
}

// Put replaces the list of a key; an empty list removes the key.
func (ls *ListState) Put(k Key, elems []Row) {
	ls.set(k, elems, ls.putTimes(elems))
}

// putTimes is the write times of a Put's elements: nil without a TTL.
func (ls *ListState) putTimes(elems []Row) []int64 {
	for _, e := range elems {
		if len(e) != len(ls.l.Value) {
			panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", ls.l.Name, len(e), len(ls.l.Value)))
		}
	}
	if !ls.l.hasTTL() {
		return nil
	}
	ts := make([]int64, len(elems))
	for i := range ts {
		ts[i] = ls.store.now
	}
	return ts
}

// Delete removes the list of a key.
func (ls *ListState) Delete(k Key) { ls.set(k, nil, nil) }

// PutAt replaces the list of key i of the last GetBatch, as Put of that
// key does, without encoding the key again or looking it up: GetBatch left
// its slot in the buffer for the rest of the batch.
func (ls *ListState) PutAt(i int, elems []Row) { ls.setAt(ls.batchAt[i], elems, ls.putTimes(elems)) }

// DeleteAt removes the list of key i of the last GetBatch (see PutAt).
func (ls *ListState) DeleteAt(i int) { ls.setAt(ls.batchAt[i], nil, nil) }

func (ls *ListState) set(k Key, elems []Row, ts []int64) {
	ls.enc = ls.l.AppendKey(ls.enc[:0], k)
	at, ok := ls.buf.lookup(ls.enc)
	if !ok {
		at = ls.buf.add(string(ls.enc))
	}
	ls.setAt(at, elems, ts)
}

func (ls *ListState) setAt(at int32, elems []Row, ts []int64) {
	if !ls.buf.live(at) || ls.buf.slots[at].pending {
		panic(fmt.Sprintf("subtask: state %q: write to slot %d, which holds no key read", ls.l.Name, at))
	}
	slot := &ls.buf.slots[at]
	slot.elems, slot.ts = elems, ts
	ls.markDirty(slot)
}

func (ls *ListState) endBatch() {
	ls.batchAt = ls.batchAt[:0]
	for _, at := range ls.clean {
		if ls.buf.live(at) && !ls.buf.slots[at].dirty {
			ls.buf.drop(at)
		}
	}
	ls.clean = ls.clean[:0]
}

func (ls *ListState) mutations() ([]mutation, error) {
	if err := ls.readUnknownImages(); err != nil {
		return nil, err
	}
	return listRows(&ls.buf, ls.l), nil
}

// readUnknownImages reads the images of the lists written without a read
// this interval: a flush needs their committed length.
func (ls *ListState) readUnknownImages() error {
	var unknown []valueMiss
	for i := range ls.buf.slots {
		if ls.buf.live(int32(i)) && ls.buf.slots[i].dirty && !ls.buf.slots[i].known {
			unknown = append(unknown, newMiss(ls.buf.keys[i], i))
		}
	}
	if len(unknown) > 0 {
		sortMisses(unknown)
		prefixes := distinctKeys(nil, unknown)
		if err := ls.images(prefixes); err != nil {
			return err
		}
		for j, u := range unknown {
			ls.buf.slots[u.idx].image, ls.buf.slots[u.idx].known = ls.found[j], true
		}
	}
	return nil
}

// listRows builds the rows of a buffer whose written lists all know their
// images: the positions that changed, and tombstones past each list's end.
// Only the written keys are sorted: a list's rows come out in position
// order, and encoded key prefixes are self-delimiting, so every row of a
// smaller key sorts before every row of a larger one. The rows' keys share
// one string.
func listRows(buf *arena[listSlot], l *layout) []mutation {
	var order []int32
	n, size := 0, 0 // rows and key bytes at most
	for i := range buf.slots {
		slot := &buf.slots[i]
		if buf.live(int32(i)) && slot.dirty {
			if !slot.known {
				panic(fmt.Sprintf("subtask: state %q: flush of a list whose image was not read", l.Name))
			}
			order = append(order, int32(i))
			m := len(slot.elems) + len(slot.image.ords)
			n, size = n+m, size+m*(len(buf.keys[i])+8)
		}
	}
	sortSlotsByKey(order, buf.keys)
	rows, keys, ends := make([]mutation, 0, n), make([]byte, 0, size), make([]int, 0, n)
	emit := func(prefix string, ord int64, m mutation) {
		keys = appendKeyDatum(append(keys, prefix...), table.BigInt(), Int(ord))
		ends = append(ends, len(keys))
		rows = append(rows, m)
	}
	for _, i := range order {
		slot, prefix := &buf.slots[i], buf.keys[i]
		img, at := slot.image, 0
		for p, e := range slot.elems {
			ts := elemTime(slot.ts, p)
			for at < len(img.ords) && img.ords[at] < int64(p) {
				emit(prefix, img.ords[at], mutation{delete: true})
				at++
			}
			if at < len(img.ords) && img.ords[at] == int64(p) {
				same := elemTime(img.ts, at) == ts && img.elems[at].Equal(e)
				at++
				if same {
					continue
				}
			}
			emit(prefix, int64(p), mutation{vals: joinVals(l, e, ts)})
		}
		for ; at < len(img.ords); at++ {
			emit(prefix, img.ords[at], mutation{delete: true})
		}
	}
	all := string(keys)
	from := 0
	for i, end := range ends {
		rows[i].key = all[from:end]
		from = end
	}
	return rows
}

func elemTime(ts []int64, i int) int64 {
	if ts == nil {
		return noWriteTime
	}
	return ts[i]
}

func (ls *ListState) reset() {
	ls.buf.reset()
	ls.clean = ls.clean[:0]
	ls.nDirty = 0
}
