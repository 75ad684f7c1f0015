package subtask

import (
	"fmt"
	"slices"
	"strings"
)

// MemoryBackend keeps the committed tables in Go maps and serializes the whole
// state at every checkpoint: the baseline the other backends are measured
// against. Restore with [RestoreMemory].
type MemoryBackend struct {
	tables map[string]*memTable
}

// memTable is one committed table: rows by encoded key and, for kinds with
// many rows per key, each key prefix's encoded keys in order.
type memTable struct {
	l      *layout // nil until opened (a table restored from a snapshot)
	kind   Kind
	cols   []Column
	nPK    int
	rows   map[string]Row
	groups map[string][]string
}

// NewMemory returns an empty memory backend.
func NewMemory() *MemoryBackend { return &MemoryBackend{tables: map[string]*memTable{}} }

func (b *MemoryBackend) open(l *layout) (committedTable, error) {
	t, ok := b.tables[l.Name]
	if !ok {
		t = &memTable{kind: l.Kind, cols: l.columns(), nPK: len(l.pkTypes), rows: map[string]Row{}}
		b.tables[l.Name] = t
	}
	if t.kind != l.Kind || t.nPK != len(l.pkTypes) || !slices.Equal(t.cols, l.columns()) {
		return nil, fmt.Errorf("memory backend: table %q holds a %s table of columns %v, not %s %v", l.Name, t.kind, t.cols, l.Kind, l.columns())
	}
	t.l = l
	if l.Kind != KindValue && t.groups == nil {
		t.groups = map[string][]string{}
		for k := range t.rows {
			p, err := l.splitPrefix(k)
			if err != nil {
				return nil, fmt.Errorf("memory backend: table %q: %w", l.Name, err)
			}
			t.groups[k[:p]] = append(t.groups[k[:p]], k)
		}
		for _, g := range t.groups {
			slices.Sort(g)
		}
	}
	return t, nil
}

func (b *MemoryBackend) commit(c commitRequest) (Checkpoint, error) {
	cp := Checkpoint{ID: c.id}
	for _, w := range c.writes {
		t := w.table.(*memTable)
		for _, m := range w.rows {
			t.apply(m)
		}
		cp.Tables = append(cp.Tables, tableCheckpoint(w))
	}
	if c.checkpoint {
		cp.State = b.snapshot()
	}
	return cp, nil
}

func (t *memTable) apply(m mutation) {
	_, had := t.rows[m.key]
	if m.delete {
		if !had {
			return
		}
		delete(t.rows, m.key)
	} else {
		if !had {
			// Flush rows may share one string for all their keys; the
			// table keeps only its own.
			m.key = strings.Clone(m.key)
		}
		t.rows[m.key] = m.vals
		if had {
			return
		}
	}
	if t.groups == nil {
		return
	}
	p, err := t.l.splitPrefix(m.key)
	if err != nil {
		panic(fmt.Sprintf("subtask: memory backend: table %q: flushed key: %v", t.l.Name, err))
	}
	g := t.groups[m.key[:p]]
	i, found := slices.BinarySearch(g, m.key)
	switch {
	case m.delete && found:
		g = slices.Delete(g, i, i+1)
	case !m.delete && !found:
		g = slices.Insert(g, i, m.key)
	}
	if len(g) == 0 {
		delete(t.groups, m.key[:p])
	} else {
		t.groups[m.key[:p]] = g
	}
}

func (b *MemoryBackend) repin() error { return nil }

// Close drops the state.
func (b *MemoryBackend) Close() error {
	b.tables = nil
	return nil
}

// mayHold leaves every key to the read.
func (t *memTable) mayHold(string) bool { return true }

func (t *memTable) get(keys []string, found func(int, Row)) error {
	for i, k := range keys {
		if vals, ok := t.rows[k]; ok {
			found(i, vals)
		}
	}
	return nil
}

func (t *memTable) scanPrefixes(prefixes []string, fn func(int, entry)) error {
	for i, p := range prefixes {
		if t.groups == nil {
			if vals, ok := t.rows[p]; ok {
				fn(i, entry{key: p, vals: vals})
			}
			continue
		}
		for _, k := range t.groups[p] {
			fn(i, entry{key: k, vals: t.rows[k]})
		}
	}
	return nil
}

func (t *memTable) scan(from, to string, fn func(entry) bool) error {
	inRange := func(k string) bool { return k >= from && (to == "" || k < to) }
	// A range inside one key prefix (a time range of one key) reads its group.
	if t.groups != nil {
		if p, err := t.l.splitPrefix(from); err == nil {
			prefix := from[:p]
			if strings.HasPrefix(to, prefix) || to == prefixEnd(prefix) {
				g := t.groups[prefix]
				i, _ := slices.BinarySearch(g, from)
				for ; i < len(g) && inRange(g[i]); i++ {
					if !fn(entry{key: g[i], vals: t.rows[g[i]]}) {
						return nil
					}
				}
				return nil
			}
		}
	}
	keys := make([]string, 0, len(t.rows))
	for k := range t.rows {
		if inRange(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !fn(entry{key: k, vals: t.rows[k]}) {
			return nil
		}
	}
	return nil
}
