package subtask

import (
	"sort"
	"strings"
)

// frozenLayer is a committed table seen through the frozen rows of a
// checkpoint whose commit has not been read back yet: an upsert overrides
// the row underneath, a tombstone hides it. Reads merge the two in key
// order. The rows are immutable (a commit on another goroutine reads them);
// the scratch slices are the owner's.
type frozenLayer struct {
	rows  []mutation // sorted, at most one per key
	under committedTable

	rest []string // keys of a get that the rows lack
	at   []int32  // their positions in the get's keys
}

// search is the position of the first row at or after key in rows[from:].
func (f *frozenLayer) search(from int, key string) int {
	rows := f.rows[from:]
	return from + sort.Search(len(rows), func(i int) bool { return rows[i].key >= key })
}

func (f *frozenLayer) get(keys []string, found func(int, Row)) error {
	f.rest, f.at = f.rest[:0], f.at[:0]
	defer clear(f.rest) // keep no key alive
	j := 0
	for i, k := range keys {
		j = f.search(j, k)
		if j < len(f.rows) && f.rows[j].key == k {
			if !f.rows[j].delete {
				found(i, f.rows[j].vals)
			}
			continue
		}
		f.rest, f.at = append(f.rest, k), append(f.at, int32(i))
	}
	if len(f.rest) == 0 {
		return nil
	}
	return f.under.get(f.rest, func(i int, vals Row) { found(int(f.at[i]), vals) })
}

// mayHold asks the table underneath only: the store widens its key bounds by
// the frozen rows when it freezes them, and a tombstone needs no bound.
func (f *frozenLayer) mayHold(p string) bool { return f.under.mayHold(p) }

func (f *frozenLayer) scanPrefixes(prefixes []string, fn func(int, entry)) error {
	if len(prefixes) == 0 {
		return nil
	}
	// q is the prefix whose frozen rows are being merged, j the first of
	// them not yet handed out.
	q, j := 0, f.search(0, prefixes[0])
	// below hands out prefix q's frozen rows with keys below key ("": all).
	below := func(key string) {
		for ; j < len(f.rows) && strings.HasPrefix(f.rows[j].key, prefixes[q]) && (key == "" || f.rows[j].key < key); j++ {
			if !f.rows[j].delete {
				fn(q, entry{key: f.rows[j].key, vals: f.rows[j].vals})
			}
		}
	}
	// reach hands out the frozen rows of every prefix before i.
	reach := func(i int) {
		for q < i {
			below("")
			q++
			if q < len(prefixes) {
				j = f.search(j, prefixes[q])
			}
		}
	}
	err := f.under.scanPrefixes(prefixes, func(i int, e entry) {
		reach(i)
		below(e.key)
		if j < len(f.rows) && f.rows[j].key == e.key {
			m := f.rows[j]
			j++
			if !m.delete {
				fn(i, entry{key: m.key, vals: m.vals})
			}
			return
		}
		fn(i, e)
	})
	if err != nil {
		return err
	}
	reach(len(prefixes))
	return nil
}

func (f *frozenLayer) scan(from, to string, fn func(entry) bool) error {
	j := f.search(0, from)
	in := func(j int) bool { return j < len(f.rows) && (to == "" || f.rows[j].key < to) }
	stopped := false
	err := f.under.scan(from, to, func(e entry) bool {
		for ; in(j) && f.rows[j].key < e.key; j++ {
			if m := f.rows[j]; !m.delete && !fn(entry{key: m.key, vals: m.vals}) {
				stopped = true
				return false
			}
		}
		if in(j) && f.rows[j].key == e.key {
			m := f.rows[j]
			j++
			if m.delete {
				return true
			}
			e = entry{key: m.key, vals: m.vals}
		}
		if !fn(e) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil || stopped {
		return err
	}
	for ; in(j); j++ {
		if m := f.rows[j]; !m.delete && !fn(entry{key: m.key, vals: m.vals}) {
			return nil
		}
	}
	return nil
}

// foldRows merges two sorted flushes of one table, at most one row per key,
// the newer row winning.
func foldRows(newer, older []mutation) []mutation {
	if len(older) == 0 {
		return newer
	}
	out := make([]mutation, 0, len(newer)+len(older))
	for len(newer) > 0 || len(older) > 0 {
		switch {
		case len(older) == 0 || len(newer) > 0 && newer[0].key < older[0].key:
			out, newer = append(out, newer[0]), newer[1:]
		case len(newer) == 0 || older[0].key < newer[0].key:
			out, older = append(out, older[0]), older[1:]
		default:
			out, newer, older = append(out, newer[0]), newer[1:], older[1:]
		}
	}
	return out
}
