package subtask

import (
	"slices"
	"strings"
)

// frozenTimes is a time-ordered state's part of a frozen flush: the buffer of
// the interval itself. Range and Scan merge it under the live buffer; Commit
// builds its rows.
type frozenTimes struct {
	l   *layout
	buf map[string]*timeSlot
}

func (f *frozenTimes) mutations() []mutation { return timeRows(f.buf, f.l) }

func (ts *TimeState) prepareFreeze() error { return nil }

func (ts *TimeState) freeze(bounds *keyBounds, prev frozenPart, prevRows []mutation) (frozenPart, []mutation, bool) {
	part := &frozenTimes{l: ts.l, buf: ts.buf}
	for prefix, slot := range part.buf {
		first, last := -1, -1
		for i, r := range slot.rows {
			if !r.deleted {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first >= 0 {
			bounds.addSpan(prefix, slot.rows[first].sub, slot.rows[last].sub)
		}
	}
	var rows []mutation
	if prev != nil {
		rows = foldRows(part.mutations(), prevRows)
		for prefix, old := range prev.(*frozenTimes).buf {
			if cur, ok := part.buf[prefix]; ok {
				part.buf[prefix] = &timeSlot{rows: overlayTimeRows(cur.rows, old.rows)}
			} else {
				part.buf[prefix] = old
			}
		}
	}
	ts.frozen = part
	ts.buf, ts.spare = ts.spare, nil
	if ts.buf == nil {
		ts.buf = map[string]*timeSlot{}
	}
	return part, rows, prev != nil
}

// thaw keeps the frozen buffer's map for a later interval.
func (ts *TimeState) thaw() {
	if ts.frozen == nil {
		return
	}
	ts.spare = ts.frozen.buf
	clear(ts.spare)
	ts.frozen = nil
}

// overlayTimeRows merges two sorted rows of one key, newer winning per
// (time, seq).
func overlayTimeRows(newer, older []timeRow) []timeRow {
	out := make([]timeRow, 0, len(newer)+len(older))
	for len(newer) > 0 || len(older) > 0 {
		switch {
		case len(older) == 0 || len(newer) > 0 && newer[0].sub < older[0].sub:
			out, newer = append(out, newer[0]), newer[1:]
		case len(newer) == 0 || older[0].sub < newer[0].sub:
			out, older = append(out, older[0]), older[1:]
		default:
			out, newer, older = append(out, newer[0]), newer[1:], older[1:]
		}
	}
	return out
}

// overlayBuffered merges two sorted runs of buffered rows, newer winning per
// key.
func overlayBuffered(newer, older []bufferedTimeRow) []bufferedTimeRow {
	if len(newer) == 0 {
		return older
	}
	return mergeNewerWins(newer, older, func(r bufferedTimeRow) string { return r.key })
}

// bufferedRows returns the rows of key prefix with from <= sub < to ("" bounds
// are open) that the live buffer and the frozen one hold, as full keys in
// key order, the live buffer's winning.
func (ts *TimeState) bufferedRows(prefix, from, to string, dst []bufferedTimeRow) []bufferedTimeRow {
	var live, frozen []bufferedTimeRow
	if slot := ts.buf[prefix]; slot != nil {
		live = slot.between(prefix, from, to, nil)
	}
	if ts.frozen != nil {
		if slot := ts.frozen.buf[prefix]; slot != nil {
			frozen = slot.between(prefix, from, to, nil)
		}
	}
	return append(dst, overlayBuffered(live, frozen)...)
}

// bufferedPrefixes is every key prefix either buffer holds, sorted.
func (ts *TimeState) bufferedPrefixes() []string {
	prefixes := make([]string, 0, len(ts.buf))
	for p := range ts.buf {
		prefixes = append(prefixes, p)
	}
	if ts.frozen != nil {
		for p := range ts.frozen.buf {
			if _, ok := ts.buf[p]; !ok {
				prefixes = append(prefixes, p)
			}
		}
	}
	slices.SortFunc(prefixes, strings.Compare)
	return prefixes
}
