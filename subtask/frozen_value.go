package subtask

// frozenValues is a value state's part of a frozen flush: the buffer of the
// interval itself, every live slot a written key. Reads look a key up in it
// before the table; Commit builds its rows.
type frozenValues struct {
	l   *layout
	buf arena[valueSlot]
	n   int // written keys
	// reuse is the storage of the state's commits' rows, which only
	// commits touch (one at a time).
	reuse *[]mutation
}

func (f *frozenValues) mutations() []mutation {
	*f.reuse = valueRows(&f.buf, *f.reuse, f.n, f.l)
	return *f.reuse
}

// lookup reports the frozen row of a key (nil: deleted), if it was written.
func (f *frozenValues) lookup(key string) (value Row, ts int64, ok bool) {
	at, ok := f.buf.index[key]
	if !ok {
		return nil, noWriteTime, false
	}
	slot := &f.buf.slots[at]
	return slot.value, slot.ts, true
}

func (v *ValueState) prepareFreeze() error { return nil }

func (v *ValueState) freeze(bounds *keyBounds, prev frozenPart, prevRows []mutation) (frozenPart, []mutation, bool) {
	part := &frozenValues{l: v.l, buf: v.buf, n: v.nDirty, reuse: &v.commitRows}
	for i, key := range part.buf.keys {
		if key != "" && part.buf.slots[i].value != nil {
			bounds.addSpan(key, "", "")
		}
	}
	var rows []mutation
	if prev != nil {
		// The new images were read through prev's rows: the new rows go
		// over them.
		rows = foldRows(valueRows(&part.buf, nil, part.n, v.l), prevRows)
		part.buf.addMissing(&prev.(*frozenValues).buf)
	}
	v.frozen = part
	v.buf.swapSpare(&v.spare)
	v.clean = v.clean[:0]
	v.nDirty = 0
	return part, rows, prev != nil
}

// thaw keeps the frozen buffer's storage for a later interval.
func (v *ValueState) thaw() {
	if v.frozen == nil {
		return
	}
	v.spare = v.frozen.buf
	v.spare.reset()
	v.frozen = nil
}
