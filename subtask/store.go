package subtask

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Store is the keyed state of one operator subtask: the states the operator
// registered, their write buffers and the backend holding what was committed.
// A Store is not safe for concurrent use; its owner (the subtask's store actor)
// serializes every call.
type Store struct {
	backend Backend
	states  []state
	byName  map[string]state
	now     int64
	// lastID is the newest checkpoint id flushed; a spill commits under it.
	lastID int64
	stats  Stats
	// frozen is the frozen flush not yet released, or released as failed.
	frozen *FrozenFlush
}

// Stats counts a store's reads of its committed tables.
type Stats struct {
	// Probes counts point and prefix probes: at most one per GetBatch, plus the
	// flush-time reads of lists written without being read.
	Probes int64
	// ProbedKeys counts the distinct keys those probes asked for.
	ProbedKeys int64
	// RangeReads counts the range reads of time-ordered states.
	RangeReads int64
}

// Stats returns the read counters.
func (s *Store) Stats() Stats { return s.stats }

func (s *Store) countProbe(keys int) {
	s.stats.Probes++
	s.stats.ProbedKeys += int64(keys)
}

// state is what the store needs from every kind of state.
type state interface {
	layout() *layout
	table() committedTable
	// mutations returns the buffer's rows for a commit, sorted by key. It may
	// read the committed table for images the buffer lacks.
	mutations() ([]mutation, error)
	// buffered is the number of keys with unflushed writes.
	buffered() int
	// endBatch drops what the last batch read and did not write.
	endBatch()
	// reset empties the buffer after a successful commit.
	reset()
	// prepareFreeze does what may fail of a freeze and changes nothing a
	// read sees (a list reads the images of lists written unread).
	prepareFreeze() error
	// freeze makes the buffer the state's part of a frozen flush, which
	// reads go through until thaw, starts an empty buffer and widens bounds
	// by the part's keys. prev is the state's part of a failed flush (nil:
	// none), whose rows prevRows are folded in under the new ones: then the
	// part's rows are built and returned (built).
	freeze(bounds *keyBounds, prev frozenPart, prevRows []mutation) (part frozenPart, rows []mutation, built bool)
	// thaw drops the frozen part from reads: the table holds its rows.
	thaw()
}

// NewStore returns an empty store over a backend.
func NewStore(b Backend) *Store {
	return &Store{backend: b, byName: map[string]state{}}
}

// SetNow sets the processing time, in epoch milliseconds, that TTL checks and
// write timestamps use until the next call. Operators set it once per batch.
func (s *Store) SetNow(millis int64) { s.now = millis }

// Now is the processing time last set.
func (s *Store) Now() int64 { return s.now }

// Backend is the store's backend.
func (s *Store) Backend() Backend { return s.backend }

func (s *Store) register(in Layout, kind Kind) (*layout, committedTable, error) {
	if in.Kind == 0 {
		in.Kind = kind
	}
	if in.Kind != kind {
		return nil, nil, fmt.Errorf("state %q: layout kind %s registered as %s", in.Name, in.Kind, kind)
	}
	l, err := newLayout(in)
	if err != nil {
		return nil, nil, err
	}
	if _, dup := s.byName[l.Name]; dup {
		return nil, nil, fmt.Errorf("state %q registered twice", l.Name)
	}
	t, err := s.backend.open(l)
	if err != nil {
		return nil, nil, fmt.Errorf("state %q: %w", l.Name, err)
	}
	return l, t, nil
}

func (s *Store) add(st state) {
	s.states = append(s.states, st)
	s.byName[st.layout().Name] = st
}

// Value registers a value state: one row per key.
func (s *Store) Value(l Layout) (*ValueState, error) {
	lay, t, err := s.register(l, KindValue)
	if err != nil {
		return nil, err
	}
	v := newValueState(s, lay, t)
	s.add(v)
	return v, nil
}

// List registers a list state: an ordered list of rows per key.
func (s *Store) List(l Layout) (*ListState, error) {
	lay, t, err := s.register(l, KindList)
	if err != nil {
		return nil, err
	}
	v := newListState(s, lay, t)
	s.add(v)
	return v, nil
}

// Map registers a map state: entries per key, keyed by the Sub columns.
func (s *Store) Map(l Layout) (*MapState, error) {
	lay, t, err := s.register(l, KindMap)
	if err != nil {
		return nil, err
	}
	v := newMapState(s, lay, t)
	s.add(v)
	return v, nil
}

// Time registers a time-ordered state: rows per key ordered by (time, seq).
func (s *Store) Time(l Layout) (*TimeState, error) {
	lay, t, err := s.register(l, KindTime)
	if err != nil {
		return nil, err
	}
	v := newTimeState(s, lay, t)
	s.add(v)
	return v, nil
}

// EndBatch ends the current batch: rows read and not written are dropped (the
// next read of their keys goes to the backend again), and handles into them
// become invalid.
func (s *Store) EndBatch() {
	for _, st := range s.states {
		st.endBatch()
	}
}

// Buffered is the number of keys with unflushed writes, over every state.
func (s *Store) Buffered() int {
	n := 0
	for _, st := range s.states {
		n += st.buffered()
	}
	return n
}

// Flush is the sync-phase entry point of checkpoint id: it commits every
// state's write buffer as one sorted batch per table (at most one row per
// primary key), empties the buffers and returns the backend's checkpoint
// artifacts. It implies EndBatch. On error the buffers are kept, so a later
// Flush writes them again (commits are idempotent row-wise); the checkpoint
// must fail.
func (s *Store) Flush(id int64) (Checkpoint, error) {
	if id < s.lastID {
		return Checkpoint{}, fmt.Errorf("flush of checkpoint %d after checkpoint %d", id, s.lastID)
	}
	if s.frozen != nil {
		// Its rows would commit after newer ones.
		return Checkpoint{}, fmt.Errorf("flush of checkpoint %d: the frozen flush of checkpoint %d is held", id, s.frozen.id)
	}
	cp, err := s.commit(id)
	if err == nil {
		s.lastID = id
	}
	return cp, err
}

// commit writes the buffers between barriers only at a barrier: rows a paimon
// store committed without its maintenance round would be invisible to its
// deletion-vector reads until the next one.
func (s *Store) commit(id int64) (Checkpoint, error) {
	s.EndBatch()
	req := commitRequest{id: id, nowMillis: s.now, checkpoint: true, writes: make([]tableWrite, len(s.states))}
	for i, st := range s.states {
		rows, err := st.mutations()
		if err != nil {
			return Checkpoint{}, fmt.Errorf("flush of checkpoint %d: state %q: %w", id, st.layout().Name, err)
		}
		checkSorted(st.layout().Name, rows)
		req.writes[i] = tableWrite{layout: st.layout(), table: st.table(), rows: rows}
	}
	cp, err := s.backend.commit(req)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("flush of checkpoint %d: %w", id, err)
	}
	for _, st := range s.states {
		st.reset()
	}
	return cp, nil
}

// Repin makes reads see the backend's newest committed state. The barrier
// calls it after a maintenance round committed on the store's tables.
func (s *Store) Repin() error { return s.backend.repin() }

// noWriteTime marks a row without a write time (never expires).
const noWriteTime int64 = math.MinInt64

// expired reports whether a row written at ts has outlived the layout's TTL
// at now: the TTL is inclusive, so a row written at t reads as absent from
// t+ttl on. The addition saturates.
func expired(l *layout, ts, now int64) bool {
	if l.TTL <= 0 || ts == noWriteTime {
		return false
	}
	if ts > math.MaxInt64-l.TTL {
		return false
	}
	return ts+l.TTL <= now
}

// writeTime is the write time stamped on a row written now.
func (s *Store) writeTime(l *layout) int64 {
	if !l.hasTTL() {
		return noWriteTime
	}
	return s.now
}

// splitVals splits a committed row into its values and its write time.
func splitVals(l *layout, vals Row) (Row, int64) {
	if !l.hasTTL() {
		return vals, noWriteTime
	}
	n := len(l.Value)
	if vals[n].IsNull() {
		return vals[:n:n], noWriteTime
	}
	return vals[:n:n], vals[n].Int()
}

// joinVals builds the non-key datums a backend stores for a row.
func joinVals(l *layout, value Row, ts int64) Row {
	if len(value) != len(l.Value) {
		panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", l.Name, len(value), len(l.Value)))
	}
	if !l.hasTTL() {
		return value
	}
	out := make(Row, len(value)+1)
	copy(out, value)
	if ts != noWriteTime {
		out[len(value)] = Int(ts)
	}
	return out
}

// sortMutations sorts flush rows by key, in place.
func sortMutations(rows []mutation) {
	if len(rows) < 2 {
		return
	}
	permute(rows, sortedPrefixes(len(rows), func(i int) string { return rows[i].key }))
}

// permute moves xs[ps[i].at] to xs[i], one cycle of the permutation at a
// time; it consumes ps.
func permute[T any](xs []T, ps []keyPrefix) {
	for i := range ps {
		if ps[i].at < 0 {
			continue
		}
		held := xs[i]
		for j := i; ; {
			k := int(ps[j].at)
			ps[j].at = -1
			if k == i {
				xs[j] = held
				break
			}
			xs[j] = xs[k]
			j = k
		}
	}
}

// sortSlotsByKey sorts slots by their keys.
func sortSlotsByKey(slots []int32, keys []string) {
	ps := sortedPrefixes(len(slots), func(i int) string { return keys[slots[i]] })
	for i := range ps {
		ps[i].at = slots[ps[i].at]
	}
	for i, p := range ps {
		slots[i] = p.at
	}
}

// keyPrefix is the first 16 bytes of an encoded key (zero-padded), and
// where the key is.
type keyPrefix struct {
	hi, lo uint64
	at     int32
}

// sortedPrefixes returns the prefixes of n keys sorted by key. A flush's
// keys sit wherever their writes left them, so each comparison of two
// keys would miss the cache twice: the sort orders the prefixes, held in
// one compact array, and reads whole keys only for prefixes alike.
func sortedPrefixes(n int, key func(int) string) []keyPrefix {
	ps := make([]keyPrefix, n)
	for i := range ps {
		var b [16]byte
		copy(b[:], key(i))
		ps[i] = keyPrefix{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), at: int32(i)}
	}
	if n < radixMin {
		slices.SortFunc(ps, func(a, b keyPrefix) int {
			if c := comparePrefixes(a, b); c != 0 {
				return c
			}
			return strings.Compare(key(int(a.at)), key(int(b.at)))
		})
		return ps
	}
	ps = radixSortPrefixes(ps)
	// Prefixes alike keep their keys' order of arrival: the keys decide.
	for i := 0; i < n; {
		j := i + 1
		for j < n && ps[j].hi == ps[i].hi && ps[j].lo == ps[i].lo {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ps[i:j], func(a, b keyPrefix) int { return strings.Compare(key(int(a.at)), key(int(b.at))) })
		}
		i = j
	}
	return ps
}

func comparePrefixes(a, b keyPrefix) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	return cmp.Compare(a.lo, b.lo)
}

// radixMin is the count of keys from which a radix sort orders their
// prefixes: below it, a comparison sort costs less than its passes.
const radixMin = 1024

// radixSortPrefixes sorts prefixes by (hi, lo), stably, a byte at a time
// from the last: one pass counts every byte position, and a position where
// every prefix holds the same byte takes no pass. A state's keys lead with
// the key group and integers that leave most bytes alike (high bytes of
// small numbers), so a flush takes a few passes over its prefixes where a
// comparison sort would take a call per comparison, log n per prefix. It
// returns the sorted prefixes, in ps or in a slice of the same length.
func radixSortPrefixes(ps []keyPrefix) []keyPrefix {
	var counts [16][256]int32
	for i := range ps {
		p := &ps[i]
		for b := range 8 {
			counts[b][byte(p.lo>>(8*b))]++
			counts[8+b][byte(p.hi>>(8*b))]++
		}
	}
	tmp := make([]keyPrefix, len(ps))
	for b := range 16 {
		c := &counts[b]
		if int(c[byte(digit(&ps[0], b))]) == len(ps) {
			continue // every prefix holds this byte
		}
		var sum int32
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		for i := range ps {
			d := byte(digit(&ps[i], b))
			tmp[c[d]] = ps[i]
			c[d]++
		}
		ps, tmp = tmp, ps
	}
	return ps
}

// digit is byte b of a prefix from the least significant: lo's bytes, then
// hi's.
func digit(p *keyPrefix, b int) uint64 {
	if b < 8 {
		return p.lo >> (8 * b)
	}
	return p.hi >> (8 * (b - 8))
}
