package subtask

import "github.com/lakestate/lakestate/table"

// frozenLists is a list state's part of a frozen flush: the buffer of the
// interval itself, every live slot a written list that knows its image. A
// read takes a key's list from it before the table (its commit leaves the
// list at positions 0..n-1); Commit diffs the lists into rows.
type frozenLists struct {
	l   *layout
	buf arena[listSlot]
}

func (f *frozenLists) mutations() []mutation { return listRows(&f.buf, f.l) }

// lookup returns the list of a written key as the table holds it once the
// flush commits.
func (f *frozenLists) lookup(key string) (listImage, bool) {
	at, ok := f.buf.index[key]
	if !ok {
		return listImage{}, false
	}
	slot := &f.buf.slots[at]
	img := listImage{elems: slot.elems, ts: slot.ts, ords: make([]int64, len(slot.elems))}
	for i := range img.ords {
		img.ords[i] = int64(i)
	}
	return img, true
}

// images reads the images of sorted, distinct prefixes into ls.found: from
// the frozen buffer the lists it holds, the others with one probe.
func (ls *ListState) images(prefixes []string) error {
	if ls.frozen == nil {
		return ls.readImages(prefixes)
	}
	imgs := make([]listImage, len(prefixes))
	var rest []string
	var at []int
	for i, p := range prefixes {
		if !ls.t.mayHold(p) {
			continue // in neither (see MapState.GetBatch): the list is empty
		}
		if img, ok := ls.frozen.lookup(p); ok {
			imgs[i] = img
			continue
		}
		rest, at = append(rest, p), append(at, i)
	}
	if len(rest) > 0 {
		if err := ls.readImages(rest); err != nil {
			return err
		}
		for j, i := range at {
			imgs[i] = ls.found[j]
		}
	}
	ls.found = imgs
	return nil
}

// prepareFreeze reads the images of lists written unread, the part of a
// freeze that needs the table (and may fail).
func (ls *ListState) prepareFreeze() error { return ls.readUnknownImages() }

func (ls *ListState) freeze(bounds *keyBounds, prev frozenPart, prevRows []mutation) (frozenPart, []mutation, bool) {
	part := &frozenLists{l: ls.l, buf: ls.buf}
	var last []byte
	for i, slot := range part.buf.slots {
		if n := len(slot.elems); part.buf.live(int32(i)) && n > 0 {
			last = appendKeyDatum(last[:0], table.BigInt(), Int(int64(n-1)))
			bounds.addSpan(part.buf.keys[i], "", string(last))
		}
	}
	var rows []mutation
	if prev != nil {
		// The new images were read through prev's lists: the new rows go
		// over prev's.
		rows = foldRows(part.mutations(), prevRows)
		part.buf.addMissing(&prev.(*frozenLists).buf)
	}
	ls.frozen = part
	ls.buf.swapSpare(&ls.spare)
	ls.clean = ls.clean[:0]
	ls.nDirty = 0
	return part, rows, prev != nil
}

// thaw keeps the frozen buffer's storage for a later interval.
func (ls *ListState) thaw() {
	if ls.frozen == nil {
		return
	}
	ls.spare = ls.frozen.buf
	ls.spare.reset()
	ls.frozen = nil
}
