package subtask

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lakestate/lakestate/table"
)

// TimeState keeps rows per key ordered by (time, seq) under PK
// [kg, key, time, seq]: window contents, interval-join sides, timers. Reads are
// range reads that merge the committed table with the write buffer (written
// rows win, deleted rows vanish); nothing read is kept. The caller owns seq
// (unique within a key and time; an arrival counter, say).
type TimeState struct {
	store *Store
	l     *layout
	t     committedTable
	buf   map[string]*timeSlot // by encoded key prefix
	enc   []byte

	// frozen is the buffer of a frozen flush not yet released (nil: none);
	// spare is one released, kept for a later interval.
	frozen *frozenTimes
	spare  map[string]*timeSlot
}

// TimeRow is one row of a time-ordered state.
type TimeRow struct {
	Time, Seq int64
	Value     Row
}

// timeSlot holds one key's written rows, sorted by encoded (time, seq).
type timeSlot struct {
	rows []timeRow
}

type timeRow struct {
	sub     string // encoded (time, seq)
	row     TimeRow
	ts      int64
	deleted bool
}

func newTimeState(s *Store, l *layout, t committedTable) *TimeState {
	return &TimeState{store: s, l: l, t: t, buf: map[string]*timeSlot{}}
}

func (ts *TimeState) layout() *layout       { return ts.l }
func (ts *TimeState) table() committedTable { return ts.t }
func (ts *TimeState) buffered() int         { return len(ts.buf) }
func (ts *TimeState) endBatch()             {}

// Name is the state's name.
func (ts *TimeState) Name() string { return ts.l.Name }

func appendTimeSeq(dst []byte, time, seq int64) []byte {
	dst = appendKeyDatum(dst, table.BigInt(), Int(time))
	return appendKeyDatum(dst, table.BigInt(), Int(seq))
}

func decodeTimeSeq(sub string) (time, seq int64, err error) {
	if len(sub) != 16 {
		return 0, 0, fmt.Errorf("time-ordered entry key of %d bytes, want 16", len(sub))
	}
	return int64(be64(sub) ^ signBit8), int64(be64(sub[8:]) ^ signBit8), nil
}

// Put writes a row at (time, seq) of a key.
func (ts *TimeState) Put(k Key, time, seq int64, value Row) {
	if len(value) != len(ts.l.Value) {
		panic(fmt.Sprintf("subtask: state %q: row has %d values, layout %d", ts.l.Name, len(value), len(ts.l.Value)))
	}
	if value == nil {
		value = Row{}
	}
	ts.set(k, timeRow{row: TimeRow{Time: time, Seq: seq, Value: value}, ts: ts.store.writeTime(ts.l)})
}

// Delete removes the row at (time, seq) of a key.
func (ts *TimeState) Delete(k Key, time, seq int64) {
	ts.set(k, timeRow{row: TimeRow{Time: time, Seq: seq}, ts: noWriteTime, deleted: true})
}

func (ts *TimeState) set(k Key, r timeRow) {
	ts.enc = ts.l.AppendKey(ts.enc[:0], k)
	slot, ok := ts.buf[string(ts.enc)]
	if !ok {
		slot = &timeSlot{}
		ts.buf[string(ts.enc)] = slot
	}
	slot.put(r)
}

func (s *timeSlot) put(r timeRow) {
	var sub [16]byte
	enc := appendTimeSeq(sub[:0], r.row.Time, r.row.Seq)
	i, ok := slices.BinarySearchFunc(s.rows, enc, func(x timeRow, e []byte) int { return strings.Compare(x.sub, string(e)) })
	if ok {
		r.sub = s.rows[i].sub
		s.rows[i] = r
		return
	}
	r.sub = string(enc)
	s.rows = slices.Insert(s.rows, i, r)
}

// Range calls fn with the rows of a key whose time is in [lo, hi], in (time,
// seq) order, until fn returns false. fn may write to the state; the rows it
// sees are those of the moment Range was called.
func (ts *TimeState) Range(k Key, lo, hi int64, fn func(TimeRow) bool) error {
	if lo > hi {
		return nil
	}
	prefix := string(ts.l.AppendKey(nil, k))
	from := string(appendKeyDatum([]byte(prefix), table.BigInt(), Int(lo)))
	// hi = MaxInt64 has no successor time: the range ends with the key's
	// prefix, and within the key's buffer it is open.
	to, subTo := prefixEnd(prefix), ""
	if hi < math.MaxInt64 {
		to = string(appendKeyDatum([]byte(prefix), table.BigInt(), Int(hi+1)))
		subTo = to[len(prefix):]
	}
	buffered := ts.bufferedRows(prefix, from[len(prefix):], subTo, nil)
	return ts.merge(from, to, buffered, func(_ string, r TimeRow) bool { return fn(r) })
}

// Scan calls fn with every row of every key whose time is in [lo, hi], in key
// order and then (time, seq) order, until fn returns false. fn may write to
// the state; the rows it sees are those of the moment Scan was called. It reads
// the whole committed table.
func (ts *TimeState) Scan(lo, hi int64, fn func(k Key, r TimeRow) bool) error {
	if lo > hi {
		return nil
	}
	var buffered []bufferedTimeRow
	for _, p := range ts.bufferedPrefixes() {
		buffered = ts.bufferedRows(p, "", "", buffered)
	}
	cols := make(Row, len(ts.l.pkTypes))
	var bad error
	err := ts.merge("", "", buffered, func(key string, r TimeRow) bool {
		if r.Time < lo || r.Time > hi {
			return true
		}
		if err := ts.l.decodePK(cols, key); err != nil {
			bad = err
			return false
		}
		k := Key{Group: int32(cols[0].Int()), Cols: slices.Clone(cols[1 : 1+len(ts.l.Key)])}
		return fn(k, r)
	})
	if err == nil {
		err = bad
	}
	return err
}

type bufferedTimeRow struct {
	key string // full encoded key
	r   timeRow
}

// between appends the slot's rows with from <= sub < to (""
// bounds are open) as full keys.
func (s *timeSlot) between(prefix, from, to string, dst []bufferedTimeRow) []bufferedTimeRow {
	for _, r := range s.rows {
		if r.sub < from || (to != "" && r.sub >= to) {
			continue
		}
		dst = append(dst, bufferedTimeRow{key: prefix + r.sub, r: r})
	}
	return dst
}

// merge reads committed rows in [from, to) merged with buffered rows (sorted
// by key, same range) and calls fn with the live ones. Rows found expired are
// tombstoned once the read ends.
func (ts *TimeState) merge(from, to string, buffered []bufferedTimeRow, fn func(key string, r TimeRow) bool) error {
	now := ts.store.now
	var expiredKeys []string
	stopped := false
	emit := func(b bufferedTimeRow) bool {
		if b.r.deleted {
			return true
		}
		if expired(ts.l, b.r.ts, now) {
			expiredKeys = append(expiredKeys, b.key)
			return true
		}
		return fn(b.key, b.r.row)
	}
	ts.store.stats.RangeReads++
	var bad error
	err := ts.t.scan(from, to, func(e entry) bool {
		for len(buffered) > 0 && buffered[0].key < e.key {
			if !emit(buffered[0]) {
				stopped = true
				return false
			}
			buffered = buffered[1:]
		}
		if len(buffered) > 0 && buffered[0].key == e.key {
			b := buffered[0]
			buffered = buffered[1:]
			if !emit(b) {
				stopped = true
				return false
			}
			return true
		}
		value, w := splitVals(ts.l, e.vals)
		if expired(ts.l, w, now) {
			expiredKeys = append(expiredKeys, e.key)
			return true
		}
		p, err := ts.l.splitPrefix(e.key)
		var time, seq int64
		if err == nil {
			time, seq, err = decodeTimeSeq(e.key[p:])
		}
		if err != nil {
			bad = fmt.Errorf("state %q: %w", ts.l.Name, err)
			return false
		}
		if !fn(e.key, TimeRow{Time: time, Seq: seq, Value: value}) {
			stopped = true
			return false
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return fmt.Errorf("state %q: range read: %w", ts.l.Name, err)
	}
	for !stopped && len(buffered) > 0 {
		if !emit(buffered[0]) {
			stopped = true
		}
		buffered = buffered[1:]
	}
	for _, key := range expiredKeys {
		if err := ts.tombstone(key); err != nil {
			return err
		}
	}
	return nil
}

// tombstone stages the deletion of a row by its full encoded key.
func (ts *TimeState) tombstone(key string) error {
	p, err := ts.l.splitPrefix(key)
	if err != nil {
		return fmt.Errorf("state %q: %w", ts.l.Name, err)
	}
	time, seq, err := decodeTimeSeq(key[p:])
	if err != nil {
		return fmt.Errorf("state %q: %w", ts.l.Name, err)
	}
	slot, ok := ts.buf[key[:p]]
	if !ok {
		slot = &timeSlot{}
		ts.buf[key[:p]] = slot
	}
	slot.put(timeRow{row: TimeRow{Time: time, Seq: seq}, ts: noWriteTime, deleted: true})
	return nil
}

func (ts *TimeState) mutations() ([]mutation, error) { return timeRows(ts.buf, ts.l), nil }

// timeRows builds the rows of a buffer, sorted.
func timeRows(buf map[string]*timeSlot, l *layout) []mutation {
	var rows []mutation
	for prefix, slot := range buf {
		for _, r := range slot.rows {
			if r.deleted {
				rows = append(rows, mutation{key: prefix + r.sub, delete: true})
			} else {
				rows = append(rows, mutation{key: prefix + r.sub, vals: joinVals(l, r.row.Value, r.ts)})
			}
		}
	}
	sortMutations(rows)
	return rows
}

func (ts *TimeState) reset() { clear(ts.buf) }
