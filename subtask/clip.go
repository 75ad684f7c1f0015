package subtask

import (
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
)

// Clip fills the store's tables from the same-named tables of other
// backends, for a restore at another parallelism: it copies the rows of the
// key groups in r that have not expired at the current time (timestamps stay
// as written), and commits them with one commit. Register every state first;
// the store must hold nothing yet. Sources are the restored stores of the old
// subtasks, whose key-group ranges are disjoint.
//
// Between paimon backends the rows move as Arrow batches, merged by key,
// and each table's commit is a bulk load of its top level (the tables are
// empty): the rows read at once, without a maintenance round.
func (s *Store) Clip(sources []Backend, r keygroup.Range) error {
	if s.Buffered() != 0 {
		return fmt.Errorf("clip into a store with %d buffered keys", s.Buffered())
	}
	if s.frozen != nil {
		return fmt.Errorf("clip into a store holding the frozen flush of checkpoint %d", s.frozen.id)
	}
	if r.IsEmpty() {
		return nil
	}
	if srcs, ok := paimonSources(s.backend, sources); ok {
		return s.clipPaimon(srcs, r)
	}
	from, to := keyGroupBound(int32(r.Start)), keyGroupBound(int32(r.End+1))
	req := commitRequest{id: s.lastID, nowMillis: s.now, writes: make([]tableWrite, len(s.states))}
	for i, st := range s.states {
		l := st.layout()
		var rows []mutation
		for si, src := range sources {
			t, err := src.open(l)
			if err != nil {
				return fmt.Errorf("clip source %d: state %q: %w", si, l.Name, err)
			}
			err = t.scan(from, to, func(e entry) bool {
				if _, ts := splitVals(l, e.vals); expired(l, ts, s.now) {
					return true
				}
				rows = append(rows, mutation{key: e.key, vals: e.vals})
				return true
			})
			if err != nil {
				return fmt.Errorf("clip source %d: state %q: %w", si, l.Name, err)
			}
		}
		sortMutations(rows)
		for j := 1; j < len(rows); j++ {
			if rows[j].key == rows[j-1].key {
				return fmt.Errorf("clip: state %q: two sources hold the same key (overlapping key-group ranges)", l.Name)
			}
		}
		req.writes[i] = tableWrite{layout: l, table: st.table(), rows: rows}
	}
	if _, err := s.backend.commit(req); err != nil {
		return fmt.Errorf("clip: %w", err)
	}
	return nil
}

// paimonSources returns the sources of a clip from paimon backends into a
// paimon backend.
func paimonSources(dst Backend, sources []Backend) ([]*PaimonBackend, bool) {
	if _, ok := dst.(*PaimonBackend); !ok {
		return nil, false
	}
	srcs := make([]*PaimonBackend, len(sources))
	for i, b := range sources {
		var ok bool
		if srcs[i], ok = b.(*PaimonBackend); !ok {
			return nil, false
		}
	}
	return srcs, true
}
