package subtask

import "strings"

// keyBounds is, per key group, the least and the greatest key a table was ever
// written, while every row it holds came through the store's own flushes
// (a table created empty by this store). A probe of a key or a key prefix
// outside its key group's bounds cannot match any row, so it is answered
// without touching the table's files: the keys a streaming job meets for the
// first time (a new auction on either side of a join, its first aggregate)
// mostly lie above every key committed in their group, since ids grow.
//
// Bounds only widen: a tombstone or a maintenance rewrite leaves them, which
// keeps them a superset of the keys present. A table whose rows this store
// did not all write (restored, clipped) has no bounds: every probe goes to it.
type keyBounds struct {
	known bool
	byKG  []keyBound // indexed by key group
}

type keyBound struct {
	lo, hi string // own copies: a flush's keys share one string
	set    bool
}

// add widens the bounds by the upserted keys of a sorted flush.
func (b *keyBounds) add(rows []mutation) {
	if !b.known {
		return
	}
	for i := 0; i < len(rows); {
		kg := keyGroupOf(rows[i].key)
		first, last := -1, -1
		for ; i < len(rows) && keyGroupOf(rows[i].key) == kg; i++ {
			if rows[i].delete {
				continue
			}
			if first < 0 {
				first = i
			}
			last = i
		}
		if first >= 0 {
			b.widen(kg, rows[first].key, rows[last].key)
		}
	}
}

// bound is key group kg's bound, grown into when new; nil (and the bounds
// unknown from then on) when kg is not a key group.
func (b *keyBounds) bound(kg int32) *keyBound {
	if kg < 0 {
		b.known = false // not a key group; the scheme would not hold
		return nil
	}
	if int(kg) >= len(b.byKG) {
		b.byKG = append(b.byKG, make([]keyBound, int(kg)+1-len(b.byKG))...)
	}
	return &b.byKG[kg]
}

func (b *keyBounds) widen(kg int32, lo, hi string) {
	kb := b.bound(kg)
	if kb == nil {
		return
	}
	if !kb.set || lo < kb.lo {
		kb.lo = strings.Clone(lo)
	}
	if !kb.set || hi > kb.hi {
		kb.hi = strings.Clone(hi)
	}
	kb.set = true
}

// addSpan widens the bounds by the keys from prefix+lo to prefix+hi (one key
// group's, in any order with other calls), building a bound only when it
// moves.
func (b *keyBounds) addSpan(prefix, lo, hi string) {
	if !b.known {
		return
	}
	kb := b.bound(keyGroupOf(prefix))
	if kb == nil {
		return
	}
	if !kb.set || compareJoined(prefix, lo, kb.lo) < 0 {
		kb.lo = prefix + lo
	}
	if !kb.set || compareJoined(prefix, hi, kb.hi) > 0 {
		kb.hi = prefix + hi
	}
	kb.set = true
}

// compareJoined compares a+b with c without joining them.
func compareJoined(a, b, c string) int {
	if len(c) < len(a) {
		if a[:len(c)] == c {
			return 1 // c is a proper prefix of a
		}
		return strings.Compare(a, c)
	}
	if r := strings.Compare(a, c[:len(a)]); r != 0 {
		return r
	}
	return strings.Compare(b, c[len(a):])
}

// mayHold reports whether the table may hold a key starting with p (a full
// key or a key prefix of whole columns, encoded as Layout.AppendKey does).
func (b *keyBounds) mayHold(p string) bool {
	if !b.known {
		return true
	}
	kg := keyGroupOf(p)
	if kg < 0 || int(kg) >= len(b.byKG) || !b.byKG[kg].set {
		return false
	}
	kb := &b.byKG[kg]
	// Every key with prefix p is at least p, and below every string that is
	// greater than p without starting with it.
	return p <= kb.hi && (kb.lo <= p || strings.HasPrefix(kb.lo, p))
}

// filter keeps the keys that the table may hold in kept, and the position in
// keys of each in at.
func (b *keyBounds) filter(keys []string, kept []string, at []int32) ([]string, []int32) {
	kept, at = kept[:0], at[:0]
	for i, k := range keys {
		if b.mayHold(k) {
			kept, at = append(kept, k), append(at, int32(i))
		}
	}
	return kept, at
}
