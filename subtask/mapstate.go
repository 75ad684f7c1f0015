package subtask

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// MapState keeps entries per key under PK [kg, key, sub...]. GetBatch hands
// out a [MapEntries] per key, the key's entries as the operator mutates them;
// a flush writes only the entries that differ from the image read from the
// table and tombstones the entries that vanished, so touching one entry of a
// hot key writes one row and a change reverted within the interval writes
// nothing. With a TTL every entry carries the time of its last Put and expires
// on read on its own (tombstoned at the next flush).
type MapState struct {
	store  *Store
	l      *layout
	t      committedTable
	buf    arena[*MapEntries]
	clean  []int32
	nDirty int

	enc    []byte
	misses []valueMiss // keys of a batch not in the buffer; idx is the slot
	probed []valueMiss // those the table may hold, sorted for the probe
	probe  []string
	read   []mapEntry // entries of a probe, before they are split per key
	ends   []int      // end of each probed key's entries in read
	flush  mapFlush
	last   lastLookup // see MapEntries.locate
	// strs holds the buffer's keys and entry keys.
	strs strSlab
	// handles is what is left of the chunk new handles come from.
	handles []MapEntries

	// frozen is the buffer of a frozen flush not yet released (nil: none);
	// spare is one released, kept for a later interval.
	frozen *frozenMap
	spare  arena[*MapEntries]
	// commitFlush is the storage of frozen flushes' rows; only their
	// commits touch it.
	commitFlush mapFlush
	// outgrown holds entry arrays that handles grew out of, for the next
	// handle that grows: see entryArray.
	outgrown [recycledClasses][]mapEntry
	// firstRoom is the room a key without entries gets at its first
	// insert; starts counts the last interval's such keys by the class of
	// their inserts (see learnFirstRoom).
	firstRoom int
	starts    [firstRoomClasses]int32
}

// firstRoomClasses bounds the room a new key starts with to 32 entries.
const firstRoomClasses = 6

// countStart counts a handle of an interval that ends towards the room
// new keys start with: one that started without entries and took inserts.
func (m *MapState) countStart(me *MapEntries) {
	if len(me.image) == 0 && me.inserted > 0 {
		m.starts[min(bits.Len(uint(me.inserted-1)), firstRoomClasses-1)]++
	}
}

// learnFirstRoom sets the room new keys start with to the median of the
// ending interval's new keys' inserts, rounded up to a power of two: a
// join side's key that takes a run of rows (an auction's bids) gets the
// room of its likes at once instead of growing through 1, 2, 4 ...
// entries, a copy and mostly an allocation each, while a side whose keys
// take one row each still starts with one.
func (m *MapState) learnFirstRoom() {
	var n int32
	for _, c := range m.starts {
		n += c
	}
	if n == 0 {
		return
	}
	var below int32
	for c, k := range m.starts {
		if below += k; 2*below >= n {
			m.firstRoom = 1 << c
			break
		}
	}
	clear(m.starts[:])
}

// recycledClasses is the number of capacity classes of outgrown entry
// arrays (1, 2, 4, ... 1024 entries). A key that takes a run of records in
// an interval (an auction's bids) grows its array through every class, and
// the next such key takes the arrays the last one left; one array per class
// bounds what is kept to 2,047 entries.
const recycledClasses = 11

// entryArray returns an empty array for at least n entries: one of a
// class's power-of-two capacity, recycled if the class holds one, where that
// capacity exceeds n by at most slack; else one of n.
func (m *MapState) entryArray(n, slack int) []mapEntry {
	c := bits.Len(uint(n - 1))
	if c >= recycledClasses || 1<<c-n > slack {
		return make([]mapEntry, 0, n)
	}
	if a := m.outgrown[c]; a != nil {
		m.outgrown[c] = nil
		return a
	}
	return make([]mapEntry, 0, 1<<c)
}

// recycle keeps an entry array a handle grew out of, which nothing else
// refers to, if it is of a class.
func (m *MapState) recycle(a []mapEntry) {
	c := bits.Len(uint(cap(a) - 1))
	if cap(a) == 0 || c >= recycledClasses || cap(a) != 1<<c {
		return
	}
	clear(a[:cap(a)]) // keep no row alive
	m.outgrown[c] = a[:0]
}

// lastLookup is the last entry key a Get looked up (me nil: none kept): its
// datums, its encoding, and its position in the handle's entries while only
// writes that account for it (moved) changed them.
type lastLookup struct {
	me  *MapEntries
	sub Row
	enc []byte
	at  int
	ok  bool
}

// MapEntries is the entries of one key, sorted by entry key. It is valid until
// the batch ends, or, once written to, until the next flush; using it
// afterwards panics. Rows passed to Put become the state's; rows it returns
// must not be modified.
type MapEntries struct {
	m       *MapState
	entries []mapEntry
	image   []mapEntry // committed entries as read; immutable
	// shared marks entries as the image itself: the first write copies.
	shared  bool
	dirty   bool
	dropped bool
	// touched is the entry keys Put or Deleted since the image was read,
	// unordered, while they are few against a large image: a flush diffs
	// only those. whole: every entry is diffed (a small image, a Clear, an
	// expiry, many writes).
	whole   bool
	touched []string
	// inserted counts the entries Put added since the image was read;
	// insertedBefore is the count of the handle of the last interval whose
	// entries are the image. Room made for growth follows them.
	inserted, insertedBefore int
}

// touch records a write of entry key sub. For a small image, or past one
// write per eight image entries, diffing every entry costs less than
// sorting the writes and searching for each.
func (me *MapEntries) touch(sub string) {
	if me.whole {
		return
	}
	if len(me.image) < 16 || len(me.touched) >= len(me.image)/8 {
		me.whole, me.touched = true, nil
		return
	}
	me.touched = append(me.touched, sub)
}

type mapEntry struct {
	sub    string // encoded entry key, without the key prefix
	subRow Row
	value  Row
	ts     int64
}

func newMapState(s *Store, l *layout, t committedTable) *MapState {
	return &MapState{store: s, l: l, t: t, buf: newArena[*MapEntries]()}
}

func (m *MapState) layout() *layout       { return m.l }
func (m *MapState) table() committedTable { return m.t }
func (m *MapState) buffered() int         { return m.nDirty }

// Name is the state's name.
func (m *MapState) Name() string { return m.l.Name }

// GetBatch returns the entries of every key, reading the keys the buffer lacks
// from the committed table with one prefix probe. The result reuses out's
// storage; repeated keys share one MapEntries.
//
// A key's first miss puts its handle in the buffer at once, so the batch's
// later records of the key find it there: only distinct keys are sorted for
// the probe, and only those the table may hold.
func (m *MapState) GetBatch(keys []Key, out []*MapEntries) ([]*MapEntries, error) {
	out = slices.Grow(out[:0], len(keys))[:len(keys)]
	m.misses, m.probed = m.misses[:0], m.probed[:0]
	// Only entries of a layout with a TTL expire: the others' handles are
	// not read here.
	ttl := m.l.hasTTL()
	for i, k := range keys {
		m.enc = m.l.AppendKey(m.enc[:0], k)
		if at, ok := m.buf.lookup(m.enc); ok {
			me := m.buf.slots[at]
			if ttl {
				me.pruneExpired()
			}
			out[i] = me
			continue
		}
		miss := newMiss(m.strs.str(m.enc), 0)
		at := m.buf.add(miss.key)
		miss.idx = int(at)
		// The entries alias the image, read below, until the first write.
		me := m.newHandle()
		m.buf.slots[at] = me
		m.clean = append(m.clean, at)
		out[i] = me
		m.misses = append(m.misses, miss)
		// The bounds widen by the frozen buffer's keys at the freeze, so
		// a key they rule out is in neither the table nor the buffer (a
		// key of a new auction): its map lookup is skipped too.
		if !m.t.mayHold(miss.key) {
			continue
		}
		if m.frozen != nil {
			if prev, ok := m.frozen.lookup(miss.key); ok {
				me.image, me.entries = prev.entries, prev.entries
				me.insertedBefore = prev.inserted
				me.pruneExpired()
				continue
			}
		}
		m.probed = append(m.probed, miss)
	}
	if len(m.misses) == 0 {
		return out, nil
	}
	m.store.countProbe(len(m.misses))
	if len(m.probed) == 0 {
		return out, nil
	}
	sortMisses(m.probed)
	m.probe = distinctKeys(m.probe[:0], m.probed)
	images, err := m.readImages(m.probe)
	if err != nil {
		// The handles made for the batch's misses must not stay, empty, in
		// the buffer.
		for _, miss := range m.misses {
			m.buf.slots[miss.idx].dropped = true
			m.buf.drop(int32(miss.idx))
		}
		return nil, fmt.Errorf("state %q: read of %d keys: %w", m.l.Name, len(m.probe), err)
	}
	for j, miss := range m.probed {
		me := m.buf.slots[miss.idx]
		me.image, me.entries = images[j], images[j]
		me.pruneExpired()
	}
	return out, nil
}

// handleChunk is the handles per chunk. A batch's misses make hundreds of
// handles, mostly of keys that live on in the buffer together until the
// flush (a join side's new keys) or die together at the batch's end (keys
// only read): chunks cost an allocation per 64 instead of one each, and a
// handle kept longer keeps at most 63 dead ones (6.5 KiB) alive with it.
const handleChunk = 64

// newHandle returns a fresh handle of a key, its entries to be the image's.
func (m *MapState) newHandle() *MapEntries {
	if len(m.handles) == 0 {
		m.handles = make([]MapEntries, handleChunk)
	}
	me := &m.handles[0]
	m.handles = m.handles[1:]
	me.m, me.shared = m, true
	return me
}

// readImages reads the committed entries of sorted, distinct key prefixes
// with one prefix probe. The images of a batch share one array; each is a
// capacity-clipped window of it, so appending to one cannot reach another.
func (m *MapState) readImages(prefixes []string) ([][]mapEntry, error) {
	m.ends = slices.Grow(m.ends[:0], len(prefixes))[:len(prefixes)]
	clear(m.ends)
	read, last := m.read[:0], 0
	var bad error
	err := m.t.scanPrefixes(prefixes, func(i int, e entry) {
		if i < last && bad == nil {
			bad = fmt.Errorf("prefix %d read after prefix %d", i, last)
		}
		last = i
		var subRow Row
		if e.pk != nil {
			subRow = e.pk[m.l.prefixCols():]
		} else {
			var err error
			if subRow, err = m.l.decodeSub(e.key); err != nil && bad == nil {
				bad = err
			}
		}
		value, ts := splitVals(m.l, e.vals)
		read = append(read, mapEntry{sub: e.key[len(prefixes[i]):], subRow: subRow, value: value, ts: ts})
		m.ends[i] = len(read)
	})
	all := slices.Clone(read)
	clear(read) // the scratch must not keep the rows alive
	m.read = read[:0]
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	images := make([][]mapEntry, len(prefixes))
	from := 0
	for i, end := range m.ends {
		end = max(end, from)
		if end > from {
			images[i] = all[from:end:end]
		}
		from = end
	}
	return images, nil
}

func (me *MapEntries) check() {
	if me.dropped {
		panic(fmt.Sprintf("subtask: state %q: MapEntries used after its batch ended", me.m.l.Name))
	}
}

func (me *MapEntries) markDirty() {
	if !me.dirty {
		me.dirty = true
		me.m.nDirty++
	}
}

// own makes the entries the handle's own before a write changes them, with
// room for as many inserts as the key took in the last interval.
func (me *MapEntries) own() {
	if me.shared {
		n := len(me.entries)
		me.entries = append(make([]mapEntry, 0, n+me.insertedBefore), me.entries...)
		me.shared = false
	}
}

// room is how many entries beyond n a copy that makes room for an insert
// leaves for it and later ones: a quarter more, or as many as the key took
// in this interval or the last if more. A key that takes many inserts in an
// interval then grows by doubling, or in one copy once its last interval's
// count is known, instead of by a quarter at a time (a copy of every entry
// each time). The room never exceeds an interval's inserts or a quarter of
// the entries; rounding to a recycled class at most doubles it.
func (me *MapEntries) room(n int) int {
	return max(n/4, me.inserted, me.insertedBefore, 1)
}

func (me *MapEntries) pruneExpired() {
	if !me.m.l.hasTTL() {
		return
	}
	now := me.m.store.now
	gone := func(e mapEntry) bool { return expired(me.m.l, e.ts, now) }
	if !slices.ContainsFunc(me.entries, gone) {
		return
	}
	me.own()
	me.entries = slices.DeleteFunc(me.entries, gone)
	me.m.forget()
	me.whole = true
	me.markDirty()
}

// find returns the position of an encoded entry key, and whether it is there.
func (me *MapEntries) find(sub []byte) (int, bool) {
	// The probe is only compared, never kept, so it is viewed as a string in
	// place: a conversion per comparison allocated on every step of the search.
	key := unsafe.String(unsafe.SliceData(sub), len(sub))
	// Entry keys mostly come in rising order (a join side's rows by their
	// ids): one past the last entry goes at the end, found with one
	// comparison instead of a search's log n, each a likely cache miss.
	if n := len(me.entries); n == 0 || me.entries[n-1].sub < key {
		return n, false
	}
	return slices.BinarySearchFunc(me.entries, key, func(e mapEntry, k string) int {
		return strings.Compare(e.sub, k)
	})
}

// locate returns the encoding of an entry key, its position and whether it
// is there. An operator that reads an entry and then writes it (Get, then
// Put or Delete) looks it up once: a Get keeps its lookup (keep), and the
// same handle asking for equal datums again skips the encoding and the
// search. A write does not keep its own: one that was not read first (a
// join side's row by its unique columns) is seldom asked for again, and
// keeping it cost a copy of its datums.
func (me *MapEntries) locate(sub Row, keep bool) ([]byte, int, bool) {
	last := &me.m.last
	if last.me == me && last.sub.Equal(sub) {
		return last.enc, last.at, last.ok
	}
	last.me = nil
	last.enc = me.m.l.appendSub(last.enc[:0], sub)
	last.at, last.ok = me.find(last.enc)
	if keep {
		last.me, last.sub = me, append(last.sub[:0], sub...)
	}
	return last.enc, last.at, last.ok
}

// moved records that an entry key is now at (ok) or would go to (!ok) a
// position, after a write that kept the last lookup's key in view.
func (me *MapEntries) moved(at int, ok bool) { me.m.last.at, me.m.last.ok = at, ok }

// forget drops the last lookup after a write that moved entries another way.
func (m *MapState) forget() { m.last.me = nil }

// Len is the number of entries.
func (me *MapEntries) Len() int { me.check(); return len(me.entries) }

// Get returns the value row of an entry.
func (me *MapEntries) Get(sub Row) (Row, bool) {
	me.check()
	_, i, ok := me.locate(sub, true)
	if !ok {
		return nil, false
	}
	return me.entries[i].value, true
}

// Put sets the value row of an entry, stamping it with the current time.
func (me *MapEntries) Put(sub, value Row) {
	me.check()
	if len(value) != len(me.m.l.Value) {
		panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", me.m.l.Name, len(value), len(me.m.l.Value)))
	}
	if value == nil {
		value = Row{}
	}
	enc, i, ok := me.locate(sub, false)
	ts := me.m.store.writeTime(me.m.l)
	switch {
	case ok:
		me.own()
		me.entries[i].value, me.entries[i].ts = value, ts
	case me.shared || len(me.entries) == cap(me.entries):
		// One copy makes the room and the handle's own entries. Those of a
		// shared handle are an image, which others may read; an array the
		// handle owns is its alone.
		n := len(me.entries)
		room := me.room(n)
		if n == 0 && len(me.image) == 0 && me.inserted == 0 {
			room = max(room, me.m.firstRoom)
		}
		e := me.m.entryArray(n+room, room)[:n+1]
		copy(e, me.entries[:i])
		e[i] = mapEntry{sub: me.m.strs.str(enc), subRow: sub, value: value, ts: ts}
		copy(e[i+1:], me.entries[i:])
		if !me.shared {
			me.m.recycle(me.entries)
		}
		me.entries, me.shared = e, false
		me.inserted++
	case i == len(me.entries):
		// Entry keys mostly come in rising order (see find).
		me.entries = append(me.entries, mapEntry{sub: me.m.strs.str(enc), subRow: sub, value: value, ts: ts})
		me.inserted++
	default:
		me.entries = slices.Insert(me.entries, i, mapEntry{sub: me.m.strs.str(enc), subRow: sub, value: value, ts: ts})
		me.inserted++
	}
	me.touch(me.entries[i].sub)
	me.moved(i, true)
	me.markDirty()
}

// Delete removes an entry and reports whether it was there.
func (me *MapEntries) Delete(sub Row) bool {
	me.check()
	_, i, ok := me.locate(sub, false)
	if ok {
		me.own()
		me.touch(me.entries[i].sub)
		me.entries = slices.Delete(me.entries, i, i+1)
		me.moved(i, false)
		me.markDirty()
	}
	return ok
}

// Clear removes every entry.
func (me *MapEntries) Clear() {
	me.check()
	if len(me.entries) > 0 {
		me.entries, me.shared = nil, false
		me.m.forget()
		me.whole = true
		me.markDirty()
	}
}

// At is the i-th entry in order of its sub-key, 0 <= i < Len(): a scan by
// index allocates nothing, where All makes an iterator per call.
func (me *MapEntries) At(i int) (sub, value Row) {
	me.check()
	e := &me.entries[i]
	return e.subRow, e.value
}

// All yields (entry key, value row) in entry-key order. The map must not be
// modified during the iteration.
func (me *MapEntries) All() iter.Seq2[Row, Row] {
	me.check()
	return func(yield func(Row, Row) bool) {
		for _, e := range me.entries {
			if !yield(e.subRow, e.value) {
				return
			}
		}
	}
}

func (m *MapState) endBatch() {
	m.forget()
	for _, at := range m.clean {
		if m.buf.live(at) && !m.buf.slots[at].dirty {
			m.buf.slots[at].dropped = true
			m.buf.drop(at)
		}
	}
	m.clean = m.clean[:0]
}

func (m *MapState) mutations() ([]mutation, error) {
	return m.flush.rows(&m.buf, m.l), nil
}

// mapFlush builds a map flush's rows; its slices are reused by the next.
type mapFlush struct {
	order []int32    // dirty slots in key order
	subs  []string   // a handle's touched entry keys, sorted
	out   []mutation // the rows of the last flush
	keys  []byte     // their keys, before they become one string
	ends  []int      // end of each row's key in keys
	// byRef: the diff emits refs (entryRows) instead of out.
	byRef bool
	refs  []mapRow
}

// mapRow is a row of a map flush by reference: its entry (a tombstone's is
// the image's) and the slot of its key, in a buffer that no longer changes.
type mapRow struct {
	e      *mapEntry
	slot   int32
	delete bool
}

// rows diffs every written key of buf against its image. Only the written
// keys are sorted: a key's rows come out in entry-key order, and encoded key
// prefixes are self-delimiting, so every row of a smaller key sorts before
// every row of a larger one. The rows' keys share one string.
func (f *mapFlush) rows(buf *arena[*MapEntries], l *layout) []mutation {
	clear(f.out) // rows of a flush that failed
	f.out, f.keys, f.ends = f.out[:0], f.keys[:0], f.ends[:0]
	f.diff(buf, l)
	all := string(f.keys)
	from := 0
	for i, end := range f.ends {
		f.out[i].key = all[from:end]
		from = end
	}
	return f.out
}

// entryRows is the rows of rows, in the same order, by reference: a writer
// takes each row's key and values from buf (paimonCodec.writeMapRecord),
// with no key put together nor any entry key's bytes read. buf must not
// change while they are in use; releaseRefs lets them go.
func (f *mapFlush) entryRows(buf *arena[*MapEntries], l *layout) []mapRow {
	f.releaseRefs()
	f.byRef = true
	f.diff(buf, l)
	f.byRef = false
	return f.refs
}

// releaseRefs drops the rows entryRows returned, keeping their storage.
func (f *mapFlush) releaseRefs() {
	clear(f.refs)
	f.refs = f.refs[:0]
}

// diff emits the rows of every written key of buf in key order.
func (f *mapFlush) diff(buf *arena[*MapEntries], l *layout) {
	f.order = f.order[:0]
	for i, me := range buf.slots {
		if buf.live(int32(i)) && me.dirty {
			f.order = append(f.order, int32(i))
		}
	}
	sortSlotsByKey(f.order, buf.keys)
	for _, at := range f.order {
		if me := buf.slots[at]; me.whole {
			f.diffAll(buf.keys[at], at, me, l)
		} else {
			f.diffTouched(buf.keys[at], at, me, l)
		}
	}
}

func (f *mapFlush) emit(prefix string, at int32, e *mapEntry, delete bool, l *layout) {
	if f.byRef {
		f.refs = append(f.refs, mapRow{e: e, slot: at, delete: delete})
		return
	}
	f.keys = append(append(f.keys, prefix...), e.sub...)
	f.ends = append(f.ends, len(f.keys))
	if delete {
		f.out = append(f.out, mutation{delete: true})
	} else {
		f.out = append(f.out, mutation{vals: joinVals(l, e.value, e.ts)})
	}
}

// diffAll emits the rows of every entry that differs from the image.
func (f *mapFlush) diffAll(prefix string, at int32, me *MapEntries, l *layout) {
	a, b := me.entries, me.image
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].sub < b[0].sub):
			f.emit(prefix, at, &a[0], false, l)
			a = a[1:]
		case len(a) == 0 || b[0].sub < a[0].sub:
			f.emit(prefix, at, &b[0], true, l)
			b = b[1:]
		default:
			if a[0].ts != b[0].ts || !a[0].value.Equal(b[0].value) {
				f.emit(prefix, at, &a[0], false, l)
			}
			a, b = a[1:], b[1:]
		}
	}
}

// diffTouched emits the rows of the touched entries that differ from the
// image: the others are the image's.
func (f *mapFlush) diffTouched(prefix string, at int32, me *MapEntries, l *layout) {
	f.subs = append(f.subs[:0], me.touched...)
	slices.Sort(f.subs)
	for i, sub := range f.subs {
		if i > 0 && sub == f.subs[i-1] {
			continue
		}
		a, inA := findEntry(me.entries, sub)
		b, inB := findEntry(me.image, sub)
		switch {
		case inA && (!inB || me.entries[a].ts != me.image[b].ts || !me.entries[a].value.Equal(me.image[b].value)):
			f.emit(prefix, at, &me.entries[a], false, l)
		case !inA && inB:
			f.emit(prefix, at, &me.image[b], true, l)
		}
	}
	clear(f.subs) // keep no key alive
}

// findEntry returns the position of entry key sub in sorted entries, and
// whether it is there.
func findEntry(entries []mapEntry, sub string) (int, bool) {
	return slices.BinarySearchFunc(entries, sub, func(e mapEntry, k string) int { return strings.Compare(e.sub, k) })
}

func (m *MapState) reset() {
	m.forget()
	for i, me := range m.buf.slots {
		if m.buf.live(int32(i)) {
			me.dropped = true
			m.countStart(me)
		}
	}
	m.learnFirstRoom()
	m.buf.reset()
	m.clean = m.clean[:0]
	m.nDirty = 0
	clear(m.flush.out)
	m.flush.out = m.flush.out[:0]
}
