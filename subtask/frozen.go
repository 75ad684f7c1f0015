package subtask

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// FrozenFlush is the write buffers of a checkpoint frozen at its barrier,
// immutable from then on. Until it is released, the store's reads see the
// live buffer over the frozen buffers over the committed (pinned) view, so
// the operator goes on while [FrozenFlush.Commit] turns the frozen buffers
// into rows and commits them elsewhere.
//
// Lifecycle: [Store.Freeze] on the owner, Commit on any goroutine, then
// [Store.Release] on the owner once the commit and what follows it (the
// maintenance round, listing) are over.
type FrozenFlush struct {
	id     int64
	now    int64
	tables []frozenTable // in registration order
	phase  atomic.Int32  // a frozenPhase
	// failed marks a flush released with ok=false: the next Freeze folds its
	// rows in. Owner only.
	failed bool
}

type frozenTable struct {
	layout *layout
	base   *paimonTable
	part   frozenPart
	// rows are the part's rows once built: by Commit, or by Freeze when it
	// folded a failed flush in.
	rows  []mutation
	built bool
	// snapshot is the table's pinned snapshot at the freeze: what a commit
	// without rows reports.
	snapshot int64
	// committed is the snapshot Commit wrote (0: none); Release reads it
	// after the commit's phase.
	committed int64
}

// frozenPart is one state's buffer in a frozen flush, which its reads go
// through until the flush is released.
type frozenPart interface {
	// mutations builds the table's rows, sorted, at most one per key. Commit
	// calls it on its goroutine: it reads only the frozen buffer, which
	// nothing changes any more.
	mutations() []mutation
}

// recordPart is a frozenPart whose commit builds its record straight from
// the frozen buffer, without its rows: nil for no rows.
type recordPart interface {
	record(c *paimonCodec) (arrow.Record, []table.ValueKind, error)
}

// rowsNow builds the table's rows unless they are.
func (ft *frozenTable) rowsNow() []mutation {
	if !ft.built {
		ft.rows, ft.built = ft.part.mutations(), true
		checkSorted(ft.layout.Name, ft.rows)
	}
	return ft.rows
}

type frozenPhase int32

const (
	phaseFrozen     frozenPhase = iota // not committed
	phaseCommitting                    // Commit is running
	phaseCommitted                     // Commit succeeded
	phaseFailed                        // Commit failed
)

// ID is the checkpoint whose interval the flush froze.
func (f *FrozenFlush) ID() int64 { return f.id }

// Tables names the state tables the flush froze, in registration order.
func (f *FrozenFlush) Tables() []string {
	names := make([]string, len(f.tables))
	for i, ft := range f.tables {
		names[i] = ft.layout.Name
	}
	return names
}

// Freeze ends the interval of checkpoint id on a paimon store: every state's
// write buffer becomes frozen, its reads go through it, and the buffers start
// empty. It implies EndBatch. Only the owner may call it. It reads the
// images of lists written unread (the commit needs their committed length,
// and only the owner reads the table); Commit builds every row.
//
// At most one frozen flush is held at a time: freezing while one is held is
// an error, except for one released with ok=false, whose rows are folded in
// under the new ones (the newer row wins per key), so the next Commit writes
// them again. On error nothing changes.
func (s *Store) Freeze(id int64) (*FrozenFlush, error) {
	b, ok := s.backend.(*PaimonBackend)
	if !ok {
		return nil, fmt.Errorf("freeze of checkpoint %d: the %T keeps Flush", id, s.backend)
	}
	if id < s.lastID {
		return nil, fmt.Errorf("freeze of checkpoint %d after checkpoint %d", id, s.lastID)
	}
	prev := s.frozen
	if prev != nil && !prev.failed {
		return nil, fmt.Errorf("freeze of checkpoint %d: the flush of checkpoint %d is not released", id, prev.id)
	}
	s.EndBatch()
	for _, st := range s.states {
		if err := st.prepareFreeze(); err != nil {
			return nil, fmt.Errorf("freeze of checkpoint %d: state %q: %w", id, st.layout().Name, err)
		}
	}
	f := &FrozenFlush{id: id, now: s.now, tables: make([]frozenTable, len(s.states))}
	for i, st := range s.states {
		base := b.tables[st.layout().Name]
		ft := frozenTable{layout: st.layout(), base: base, snapshot: base.snapshot}
		var prevPart frozenPart
		var prevRows []mutation
		if prev != nil && i < len(prev.tables) {
			prevPart, prevRows = prev.tables[i].part, prev.tables[i].rowsNow()
		}
		// The bounds widen at the freeze, on the owner: reads prune with
		// them once the flush is released, and a commit that fails may
		// still have landed.
		ft.part, ft.rows, ft.built = st.freeze(&base.bounds, prevPart, prevRows)
		if ft.built {
			checkSorted(ft.layout.Name, ft.rows)
		}
		f.tables[i] = ft
	}
	s.frozen, s.lastID = f, id
	return f, nil
}

// Commit builds the rows of the frozen buffers and writes them: one APPEND
// snapshot per table that has rows, as Flush does, and returns the same
// checkpoint artifacts (each table's Snapshot is its commit's, or the
// snapshot pinned at the freeze when it had no rows). It may run on any
// goroutine while the owner reads and writes the store: it touches the frozen
// buffers, the Paimon tables and commit state that no read touches. It runs once; a failed commit is retried by folding its
// rows into the next Freeze.
func (f *FrozenFlush) Commit() (Checkpoint, error) {
	if !f.phase.CompareAndSwap(int32(phaseFrozen), int32(phaseCommitting)) {
		return Checkpoint{}, fmt.Errorf("commit of checkpoint %d: %s", f.id, frozenPhase(f.phase.Load()))
	}
	cp := Checkpoint{ID: f.id}
	for i := range f.tables {
		ft := &f.tables[i]
		tc, id, err := ft.commit(f.now)
		if err != nil {
			f.phase.Store(int32(phaseFailed))
			return Checkpoint{}, fmt.Errorf("commit of checkpoint %d: %w", f.id, err)
		}
		tc.Snapshot = ft.snapshot
		if tc.Committed {
			tc.Snapshot, ft.committed = id, id
		}
		cp.Tables = append(cp.Tables, tc)
	}
	f.phase.Store(int32(phaseCommitted))
	return cp, nil
}

// commit writes the table's rows, if any, and returns their counts and
// the snapshot committed. A part that builds its record itself does, unless
// its rows were built (a failed flush folded in at the freeze).
func (ft *frozenTable) commit(now int64) (TableCheckpoint, int64, error) {
	p, ok := ft.part.(recordPart)
	if !ok || ft.built {
		rows := ft.rowsNow()
		tc := tableCheckpoint(tableWrite{layout: ft.layout, rows: rows})
		if len(rows) == 0 {
			return tc, 0, nil
		}
		id, err := ft.base.commitRows(rows, now)
		return tc, id, err
	}
	tc := TableCheckpoint{Name: ft.layout.Name}
	rec, kinds, err := p.record(ft.base.writer)
	if err != nil || rec == nil {
		return tc, 0, err
	}
	for _, k := range kinds {
		if k == table.KindDelete {
			tc.Tombstones++
		} else {
			tc.Upserts++
		}
	}
	tc.Committed = true
	id, err := ft.base.commitRecord(rec, kinds, now)
	rec.Release()
	ft.base.writer.recycle() // the record is written: its buffers serve the next
	return tc, id, err
}

func (p frozenPhase) String() string {
	switch p {
	case phaseFrozen:
		return "not committed"
	case phaseCommitting:
		return "commit running"
	case phaseCommitted:
		return "already committed"
	case phaseFailed:
		return "commit failed"
	}
	return fmt.Sprintf("phase %d", int32(p))
}

// Release ends a frozen flush, on the owner, before the next Freeze. With ok
// (the commit and the maintenance round succeeded), pins maps a state's name
// to the snapshot its reads move to (the round's, not older than the
// commit's); the frozen layer is dropped. A table missing from pins moves to
// its commit's snapshot, which is readable only without deletion vectors. Without ok (the commit, the round,
// the listing or the pin failed) the layer stays readable and the next
// Freeze folds its rows in; so does a Release whose pins fail, which then
// returns the error and moves no table's reads. Releasing a flush whose commit is running is an error.
func (s *Store) Release(f *FrozenFlush, ok bool, pins map[string]int64) error {
	if f == nil || f != s.frozen {
		return errors.New("release of a flush the store does not hold")
	}
	if f.phase.CompareAndSwap(int32(phaseFrozen), int32(phaseFailed)) {
		// Never committed, and now it cannot be.
		f.failed = true
		if ok {
			return fmt.Errorf("release of checkpoint %d as committed: %s", f.id, phaseFrozen)
		}
		return nil
	}
	phase := frozenPhase(f.phase.Load())
	if phase == phaseCommitting {
		return fmt.Errorf("release of checkpoint %d: %s", f.id, phase)
	}
	if !ok || phase != phaseCommitted {
		f.failed = true
		if ok {
			return fmt.Errorf("release of checkpoint %d as committed: %s", f.id, phase)
		}
		return nil
	}
	// Every view opens before any read moves: a release that fails leaves
	// every table where it was, so the snapshots the reads use stay the
	// ones the barrier keeps pinned.
	type move struct {
		t    *paimonTable
		view *table.View
		id   int64
	}
	var moves []move
	var errs []error
	for _, ft := range f.tables {
		id, pinned := pins[ft.layout.Name]
		if !pinned {
			if ft.committed == 0 {
				continue
			}
			if ft.base.t.Schema().DeletionVectors() {
				errs = append(errs, fmt.Errorf("release of checkpoint %d: no snapshot to pin for table %q, whose new rows only a maintenance round makes readable", f.id, ft.layout.Name))
				continue
			}
			id = ft.committed
		}
		if id < ft.committed {
			errs = append(errs, fmt.Errorf("release of checkpoint %d: table %q pinned at snapshot %d, before its commit's %d", f.id, ft.layout.Name, id, ft.committed))
			continue
		}
		if id != ft.base.snapshot {
			view, err := ft.base.openView(id)
			if err != nil {
				errs = append(errs, fmt.Errorf("release of checkpoint %d: %w", f.id, err))
				continue
			}
			moves = append(moves, move{ft.base, view, id})
		}
	}
	if err := errors.Join(errs...); err != nil {
		for _, m := range moves {
			m.view.Close()
		}
		// The layer stays over the pinned views: its rows are the newest
		// the table holds, so reads stay right, and the next Freeze writes
		// them again.
		f.failed = true
		return err
	}
	for _, m := range moves {
		m.t.setView(m.view, m.id)
	}
	for _, st := range s.states {
		st.thaw()
	}
	s.frozen = nil
	return nil
}

// foldRows merges two sorted flushes of one table, at most one row per key,
// the newer row winning.
func foldRows(newer, older []mutation) []mutation {
	return mergeNewerWins(newer, older, func(m mutation) string { return m.key })
}

// mergeNewerWins merges two runs sorted by distinct keys; where both hold a
// key, the newer run's element wins. Only an empty older run is not copied.
func mergeNewerWins[T any](newer, older []T, key func(T) string) []T {
	if len(older) == 0 {
		return newer
	}
	out := make([]T, 0, len(newer)+len(older))
	for len(newer) > 0 || len(older) > 0 {
		switch {
		case len(older) == 0 || len(newer) > 0 && key(newer[0]) < key(older[0]):
			out, newer = append(out, newer[0]), newer[1:]
		case len(newer) == 0 || key(older[0]) < key(newer[0]):
			out, older = append(out, older[0]), older[1:]
		default:
			out, newer, older = append(out, newer[0]), newer[1:], older[1:]
		}
	}
	return out
}
