package subtask

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// ValueState keeps one row per key. Rows handed to Put become the state's
// and must not be modified afterwards; rows GetBatch returns must not be
// modified (build a new row and Put it).
type ValueState struct {
	store *Store
	l     *layout
	t     committedTable
	buf   arena[valueSlot]
	// clean lists slots read by the current batch; EndBatch drops those still
	// clean.
	clean  []int32
	nDirty int

	enc    []byte      // scratch
	strs   strSlab     // the buffer's keys
	misses []valueMiss // keys of a batch not in the buffer; idx is the slot
	probed []valueMiss // those the table may hold, sorted for the probe
	late   []lateRead
	probe  []string
	found  []Row
	rows   []mutation // the rows of the last flush, reused by the next
	// The keys of the last GetBatch until the batch ends: their slots,
	// their encodings back to back and where each ends. An operator writes
	// the keys it read in the order it read them, so a write looks its key
	// up among the next few after the last one found (cursor) before the
	// buffer's index: a scan of bytes in cache instead of a lookup that
	// misses it.
	batchAt    []int32
	batchEnc   []byte
	batchEnds  []int
	batchTails []uint64 // each key's last eight bytes (see keyTail)
	cursor     int
	// groupOf is the scratch of Groups.
	groupOf []int32

	// frozen is the buffer of a frozen flush not yet released (nil: none);
	// spare is one released, kept for a later interval.
	frozen *frozenValues
	spare  arena[valueSlot]
	// commitRows is the storage of frozen flushes' rows; only their
	// commits touch it.
	commitRows []mutation
}

// valueSlot is one key in the buffer: its current row and, when the key was
// read from the table this interval, the committed image.
type valueSlot struct {
	value   Row // nil: absent
	ts      int64
	image   Row // committed row; nil: absent or unknown
	imageTs int64
	known   bool // image was read from the table
	dirty   bool
	// pending: added by the batch being read, its image not yet read.
	pending bool
}

// valueMiss is a key a batch read that the buffer lacks: its encoding, its
// first eight bytes as a number (see keyHead) and its index in the batch.
type valueMiss struct {
	key  string
	idx  int
	head uint64
}

func newMiss[K string | []byte](enc K, idx int) valueMiss {
	return valueMiss{key: string(enc), idx: idx, head: keyHead(enc)}
}

// keyHead is the first eight bytes of an encoded key as a big-endian number,
// zero-padded: heads order as their keys do, except that equal heads leave the
// order to the rest of the keys.
func keyHead[K string | []byte](k K) uint64 {
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// sortMisses sorts a batch's misses by key, mostly by comparing heads, or
// many by their prefixes' bytes (see radixSortPrefixes).
func sortMisses(ms []valueMiss) {
	if len(ms) >= radixMin {
		permute(ms, sortedPrefixes(len(ms), func(i int) string { return ms[i].key }))
		return
	}
	slices.SortFunc(ms, func(a, b valueMiss) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

func newValueState(s *Store, l *layout, t committedTable) *ValueState {
	return &ValueState{store: s, l: l, t: t, buf: newArena[valueSlot]()}
}

func (v *ValueState) layout() *layout       { return v.l }
func (v *ValueState) table() committedTable { return v.t }
func (v *ValueState) buffered() int         { return v.nDirty }

// Name is the state's name.
func (v *ValueState) Name() string { return v.l.Name }

// GetBatch returns the current row of every key (nil when absent), reading
// the keys the buffer lacks from the committed table with one probe. The
// result reuses out's storage. Rows stay readable until the batch ends.
//
// A key's first miss puts its slot in the buffer at once, so the batch's
// later records of the key find it there: only distinct keys are sorted for
// the probe, and only those the table may hold.
func (v *ValueState) GetBatch(keys []Key, out []Row) ([]Row, error) {
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	v.misses, v.probed, v.late = v.misses[:0], v.probed[:0], v.late[:0]
	v.forgetBatch()
	v.batchAt = slices.Grow(v.batchAt, len(keys))[:len(keys)]
	now := v.store.now
	for i, k := range keys {
		start := len(v.batchEnc)
		v.batchEnc = v.l.AppendKey(v.batchEnc, k)
		v.batchEnds = append(v.batchEnds, len(v.batchEnc))
		enc := v.batchEnc[start:]
		v.batchTails = append(v.batchTails, keyTail(enc))
		if at, ok := v.buf.lookup(enc); ok {
			v.batchAt[i] = at
			slot := &v.buf.slots[at]
			if slot.pending {
				v.late = append(v.late, lateRead{idx: i, at: at})
				continue
			}
			if slot.value != nil && expired(v.l, slot.ts, now) {
				v.expire(slot)
			}
			out[i] = slot.value
			continue
		}
		miss := newMiss(v.strs.str(enc), 0)
		at := v.add(miss.key)
		v.batchAt[i] = at
		slot := &v.buf.slots[at]
		slot.known, slot.pending = true, true
		v.clean = append(v.clean, at)
		v.late = append(v.late, lateRead{idx: i, at: at})
		miss.idx = int(at)
		v.misses = append(v.misses, miss)
		// A key the bounds rule out is in neither the table nor the
		// frozen buffer, whose keys widened them (see MapState.GetBatch).
		if !v.t.mayHold(miss.key) {
			continue
		}
		if v.frozen != nil {
			if value, ts, ok := v.frozen.lookup(miss.key); ok {
				slot.image, slot.imageTs = value, ts
				slot.value, slot.ts = value, ts
				continue
			}
		}
		v.probed = append(v.probed, miss)
	}
	if len(v.misses) == 0 {
		return out, nil
	}
	v.store.countProbe(len(v.misses))
	if len(v.probed) > 0 {
		sortMisses(v.probed)
		v.probe = distinctKeys(v.probe[:0], v.probed)
		v.found = slices.Grow(v.found[:0], len(v.probe))[:len(v.probe)]
		clear(v.found)
		if err := v.t.get(v.probe, func(i int, vals Row) { v.found[i] = vals }); err != nil {
			// The slots made for the batch's misses must not stay, absent,
			// in the buffer.
			for _, miss := range v.misses {
				v.buf.drop(int32(miss.idx))
			}
			v.forgetBatch()
			return nil, fmt.Errorf("state %q: probe of %d keys: %w", v.l.Name, len(v.probe), err)
		}
		for j, miss := range v.probed {
			if vals := v.found[j]; vals != nil {
				slot := &v.buf.slots[miss.idx]
				slot.image, slot.imageTs = splitVals(v.l, vals)
				slot.value, slot.ts = slot.image, slot.imageTs
			}
		}
		clear(v.found) // keep no row alive
	}
	for _, miss := range v.misses {
		slot := &v.buf.slots[miss.idx]
		slot.pending = false
		if slot.value != nil && expired(v.l, slot.ts, now) {
			v.expire(slot)
		}
	}
	for _, r := range v.late {
		out[r.idx] = v.buf.slots[r.at].value
	}
	return out, nil
}

// Groups returns the groups of the last GetBatch's keys: of[i] is key i's
// group and first[g] the index of group g's first key, groups numbered in
// the order of their first keys; equal keys share a group. The slots
// GetBatch found or made for the keys tell them apart, so an operator that
// folds a batch per key needs no index of its own, nor a second encoding of
// each key. The results reuse of's and first's storage.
func (v *ValueState) Groups(of []int, first []int) ([]int, []int) {
	return slotGroups(v.batchAt, len(v.buf.slots), &v.groupOf, of, first)
}

// lateRead is a record of a batch whose key's row comes with the batch's
// probe: its index in the batch and its slot.
type lateRead struct {
	idx int
	at  int32
}

// add adds a key to the buffer, absent and unread, and returns its slot.
func (v *ValueState) add(key string) int32 {
	at := v.buf.add(key)
	v.buf.slots[at] = valueSlot{ts: noWriteTime, imageTs: noWriteTime}
	return at
}

// expire turns a key whose row outlived the TTL into a tombstone.
func (v *ValueState) expire(slot *valueSlot) {
	if !slot.dirty {
		v.nDirty++
	}
	slot.value, slot.ts, slot.dirty = nil, noWriteTime, true
}

// Put sets the row of a key.
func (v *ValueState) Put(k Key, value Row) {
	if len(value) != len(v.l.Value) {
		panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", v.l.Name, len(value), len(v.l.Value)))
	}
	if value == nil {
		value = Row{}
	}
	v.set(k, value, v.store.writeTime(v.l))
}

// Delete removes a key.
func (v *ValueState) Delete(k Key) { v.set(k, nil, noWriteTime) }

// PutAt sets the row of key i of the last GetBatch, as Put of that key
// does, without encoding the key again or looking it up: GetBatch left its
// slot in the buffer for the rest of the batch.
func (v *ValueState) PutAt(i int, value Row) {
	if len(value) != len(v.l.Value) {
		panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", v.l.Name, len(value), len(v.l.Value)))
	}
	if value == nil {
		value = Row{}
	}
	v.setAt(v.batchAt[i], value, v.store.writeTime(v.l))
}

// DeleteAt removes key i of the last GetBatch (see PutAt).
func (v *ValueState) DeleteAt(i int) { v.setAt(v.batchAt[i], nil, noWriteTime) }

// DeleteBatch removes keys.
func (v *ValueState) DeleteBatch(keys []Key) {
	for _, k := range keys {
		v.Delete(k)
	}
}

// PutBatch sets the rows of keys; a nil row deletes its key.
func (v *ValueState) PutBatch(keys []Key, values []Row) {
	if len(keys) != len(values) {
		panic(fmt.Sprintf("subtask: state %q: %d keys, %d rows", v.l.Name, len(keys), len(values)))
	}
	for i, k := range keys {
		if values[i] == nil {
			v.Delete(k)
		} else {
			v.Put(k, values[i])
		}
	}
}

// batchWindow is how many keys of the last GetBatch past the last one
// written a write compares its key with; resyncWindow is how many past it
// a write found through the index looks for its slot among, so that the
// cursor follows an operator that skips keys (unchanged rows, repeated
// keys).
const (
	batchWindow  = 16
	resyncWindow = 256
)

// batchSlot returns the slot of an encoded key among the next batchWindow
// keys of the last GetBatch from the cursor, if it is there.
func (v *ValueState) batchSlot(enc []byte) (int32, bool) {
	tail := keyTail(enc)
	for j := v.cursor; j < min(v.cursor+batchWindow, len(v.batchEnds)); j++ {
		if v.batchTails[j] != tail {
			continue
		}
		from := 0
		if j > 0 {
			from = v.batchEnds[j-1]
		}
		if string(v.batchEnc[from:v.batchEnds[j]]) == string(enc) {
			v.cursor = j + 1
			return v.batchAt[j], true
		}
	}
	return 0, false
}

// keyTail is the last eight bytes of an encoded key (fewer zero-padded):
// the low bytes of its last column, where a batch's keys differ most.
func keyTail(enc []byte) uint64 { return keyHead(enc[max(0, len(enc)-8):]) }

// resync moves the cursor past slot at's first key among the next
// resyncWindow keys of the last GetBatch, if it is there.
func (v *ValueState) resync(at int32) {
	for j := v.cursor; j < min(v.cursor+resyncWindow, len(v.batchAt)); j++ {
		if v.batchAt[j] == at {
			v.cursor = j + 1
			return
		}
	}
}

func (v *ValueState) set(k Key, value Row, ts int64) {
	v.enc = v.l.AppendKey(v.enc[:0], k)
	at, ok := v.batchSlot(v.enc)
	if !ok {
		if at, ok = v.buf.lookup(v.enc); ok {
			v.resync(at)
		}
	}
	if !ok {
		at = v.add(v.strs.str(v.enc))
	}
	v.setAt(at, value, ts)
}

func (v *ValueState) setAt(at int32, value Row, ts int64) {
	if !v.buf.live(at) || v.buf.slots[at].pending {
		panic(fmt.Sprintf("subtask: state %q: write to slot %d, which holds no key read", v.l.Name, at))
	}
	slot := &v.buf.slots[at]
	if !slot.dirty {
		v.nDirty++
	}
	slot.value, slot.ts, slot.dirty = value, ts, true
}

// forgetBatch drops the keys of the last GetBatch: their slots may go.
func (v *ValueState) forgetBatch() {
	v.batchAt, v.batchEnc, v.batchEnds, v.batchTails, v.cursor = v.batchAt[:0], v.batchEnc[:0], v.batchEnds[:0], v.batchTails[:0], 0
}

func (v *ValueState) endBatch() {
	v.forgetBatch()
	for _, at := range v.clean {
		if v.buf.live(at) && !v.buf.slots[at].dirty {
			v.buf.drop(at)
		}
	}
	v.clean = v.clean[:0]
}

func (v *ValueState) mutations() ([]mutation, error) {
	v.rows = valueRows(&v.buf, v.rows, v.nDirty, v.l)
	return v.rows, nil
}

// valueRows builds the rows of a buffer's written keys, sorted, reusing
// reuse: the keys whose row differs from the image read, all keys written
// without a read. The slots are sorted by key first and the rows built in
// that order, which moves int32s where sorting the rows would move their
// keys and values.
func valueRows(buf *arena[valueSlot], reuse []mutation, n int, l *layout) []mutation {
	clear(reuse) // rows of a flush that failed
	order := make([]int32, 0, n)
	for i := range buf.slots {
		slot := &buf.slots[i]
		if !buf.live(int32(i)) || !slot.dirty {
			continue
		}
		if slot.known && slot.value == nil && slot.image == nil {
			continue // deleting what the table does not hold
		}
		if slot.known && slot.value != nil && slot.image != nil && slot.ts == slot.imageTs && slot.value.Equal(slot.image) {
			continue // unchanged
		}
		order = append(order, int32(i))
	}
	sortSlotsByKey(order, buf.keys)
	rows := slices.Grow(reuse[:0], len(order))
	for _, i := range order {
		if slot := &buf.slots[i]; slot.value == nil {
			rows = append(rows, mutation{key: buf.keys[i], delete: true})
		} else {
			rows = append(rows, mutation{key: buf.keys[i], vals: joinVals(l, slot.value, slot.ts)})
		}
	}
	return rows
}

func (v *ValueState) reset() {
	v.forgetBatch()
	clear(v.rows)
	v.rows = v.rows[:0]
	v.buf.reset()
	v.clean = v.clean[:0]
	v.nDirty = 0
}
