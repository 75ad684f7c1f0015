package subtask

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// frozenMap is a map state's part of a frozen flush: the buffer of the
// interval itself, every live handle a written key holding all its entries
// and the image they replace. A read takes a key's entries from it before
// the table; Commit diffs them into rows.
type frozenMap struct {
	l   *layout
	buf arena[*MapEntries]
	// flush is the storage of the state's commits' rows, which only
	// commits touch (one at a time).
	flush *mapFlush
}

func (f *frozenMap) mutations() []mutation { return f.flush.rows(&f.buf, f.l) }

// record builds the record of the part's rows without building them
// (nil for none): see paimonCodec.writeMapRecord.
func (f *frozenMap) record(c *paimonCodec) (arrow.Record, []table.ValueKind, error) {
	rows := f.flush.entryRows(&f.buf, f.l)
	defer f.flush.releaseRefs() // keep no entry alive
	if len(rows) == 0 {
		return nil, nil, nil
	}
	return c.writeMapRecord(rows, f.buf.keys)
}

// lookup returns the handle of a written key, which holds all its entries.
func (f *frozenMap) lookup(key string) (*MapEntries, bool) {
	at, ok := f.buf.index[key]
	if !ok {
		return nil, false
	}
	return f.buf.slots[at], true
}

func (m *MapState) prepareFreeze() error { return nil }

func (m *MapState) freeze(bounds *keyBounds, prev frozenPart, prevRows []mutation) (frozenPart, []mutation, bool) {
	m.forget()
	part := &frozenMap{l: m.l, buf: m.buf, flush: &m.commitFlush}
	for i, me := range part.buf.slots {
		if !part.buf.live(int32(i)) {
			continue
		}
		me.dropped = true // the handle's interval is over
		if n := len(me.entries); n > 0 {
			bounds.addSpan(part.buf.keys[i], me.entries[0].sub, me.entries[n-1].sub)
		}
		m.countStart(me)
	}
	m.learnFirstRoom()
	var rows []mutation
	if prev != nil {
		// The new images were read through prev's entries: the new rows
		// go over prev's.
		var fresh mapFlush // prevRows may be in the commits' storage
		rows = foldRows(fresh.rows(&part.buf, m.l), prevRows)
		part.buf.addMissing(&prev.(*frozenMap).buf)
	}
	m.frozen = part
	m.buf.swapSpare(&m.spare)
	m.clean = m.clean[:0]
	m.nDirty = 0
	return part, rows, prev != nil
}

// thaw keeps the frozen buffer's storage for a later interval.
func (m *MapState) thaw() {
	if m.frozen == nil {
		return
	}
	m.spare = m.frozen.buf
	m.spare.reset()
	m.frozen = nil
}
