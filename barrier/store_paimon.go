package barrier

import (
	"errors"
	"fmt"
	"path"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/listing"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// ErrStoreUnreadable: a flush committed rows that the store's reads cannot
// see, because the maintenance round that makes a deletion-vector table's
// level 0 readable did not complete (or the reads were not moved to its
// snapshot). Until a later barrier's round succeeds, reads miss those rows:
// a subtask must not go on processing with the store; it fails over to the
// last completed checkpoint.
var ErrStoreUnreadable = errors.New("store unreadable: flushed rows await a maintenance round")

// paimonSync is the sync phase of a paimon store, one stage at a time:
//
//	flush          the write buffers, one APPEND snapshot per table (executor)
//	round          every table's maintenance round (its Maintainer)
//	list, prepare  every table's live files at the round's snapshot (its
//	               Lister), and on the executor: reads moved to the round's
//	               snapshot, the snapshot's metadata files named
//	link           the reuse decision, then hard links of exactly the files
//	               to upload into chk-<n>/ (executor)
//
// The tables of a stage run in parallel; a failure ends the phase once no
// executor job on the store is out (the store is the subtask's again when
// SyncDone goes), and answers still on their way are recognized by their
// checkpoint id and dropped. An abort ends it too, but only once the reads
// see every row the flush committed.
type paimonSync struct {
	backend *subtask.PaimonBackend
	tables  []*paimonSyncTable // in registration order
	stage   paimonStage
	waiting int  // answers of the stage's actors still to come
	jobOut  bool // an executor job on the store (or chk-<n>/) is out
	err     error
	// repinned: reads see the round's snapshot. Before that a table whose
	// flush committed rows reads without them.
	repinned bool
	decision *Decision
	links    map[string]string // link path in chk-<n>/ -> table file
}

type paimonStage uint8

const (
	stageFlush paimonStage = iota + 1
	stageRound
	stageList
	stageLink
)

type paimonSyncTable struct {
	name      string
	agent     *actor.PID
	committed bool  // the flush committed rows to it
	data      int64 // the flush's snapshot
	round     int64 // the round's snapshot
	files     *listing.LiveFiles
	meta      []table.MetaFile
}

// Messages the Store actor sends itself in a paimon sync phase.
type (
	paimonFlushed struct {
		id  CheckpointID
		cp  subtask.Checkpoint
		err error
	}
	paimonPrepared struct {
		id       CheckpointID
		meta     map[string][]table.MetaFile
		repinned bool
		err      error
	}
	paimonLinked struct {
		id  CheckpointID
		err error
	}
)

func (m *paimonFlushed) Trace() string {
	return fmt.Sprintf("id=%d tables=%d err=%v", m.id, len(m.cp.Tables), m.err)
}
func (m *paimonPrepared) Trace() string {
	return fmt.Sprintf("id=%d repinned=%t err=%v", m.id, m.repinned, m.err)
}
func (m *paimonLinked) Trace() string { return fmt.Sprintf("id=%d err=%v", m.id, m.err) }

// paimonBarrier starts the sync phase of a paimon store: the flush.
func (s *StoreActor) paimonBarrier(sy *syncing) {
	pb := sy.barrier.Store.Backend().(*subtask.PaimonBackend)
	if s.paimonBackend != nil && s.paimonBackend != pb {
		s.syncing = nil
		s.refuse(sy.barrier, errors.New("a paimon store actor serves one store; the barrier lends another"))
		return
	}
	s.paimonBackend = pb
	ps := &paimonSync{backend: pb, stage: stageFlush, jobOut: true}
	sy.paimon = ps
	store, id := sy.barrier.Store, sy.barrier.ID
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		cp, err := store.Flush(int64(id))
		return &paimonFlushed{id: id, cp: cp, err: err}
	})
}

// paimonSyncOf returns the paimon sync phase of checkpoint id, or nil for
// an answer that belongs to a phase already over.
func (s *StoreActor) paimonSyncOf(id CheckpointID) (*syncing, *paimonSync) {
	sy := s.syncing
	if sy == nil || sy.barrier.ID != id || sy.paimon == nil {
		return nil, nil
	}
	return sy, sy.paimon
}

func (ps *paimonSync) table(name string) *paimonSyncTable {
	for _, t := range ps.tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (ps *paimonSync) fail(err error) {
	if ps.err == nil {
		ps.err = err
	}
}

// unreadable reports whether a table's reads miss rows its flush committed.
func (ps *paimonSync) unreadable() bool {
	if ps.repinned {
		return false
	}
	for _, t := range ps.tables {
		if t.committed {
			return true
		}
	}
	return false
}

func (s *StoreActor) paimonFlushed(m *paimonFlushed) {
	sy, ps := s.paimonSyncOf(m.id)
	if ps == nil || ps.stage != stageFlush {
		panic(fmt.Sprintf("barrier: flush result of checkpoint %d outside its sync phase", m.id))
	}
	ps.jobOut = false
	if m.err != nil {
		ps.fail(m.err) // the write buffers are kept; nothing is unreadable
		s.paimonStep(sy)
		return
	}
	ps.stage = stageRound
	for _, tc := range m.cp.Tables {
		if tc.Snapshot == 0 {
			continue // never committed: nothing to checkpoint
		}
		agent, err := s.tableAgent(ps.backend, tc.Name)
		if err != nil {
			ps.fail(err)
			break
		}
		ps.tables = append(ps.tables, &paimonSyncTable{name: tc.Name, agent: agent, committed: tc.Committed, data: tc.Snapshot})
	}
	if ps.err != nil {
		s.paimonStep(sy)
		return
	}
	for _, t := range ps.tables {
		s.ctx.Send(t.agent, &agentRound{id: m.id, snapshot: t.data})
		ps.waiting++
	}
	s.paimonStep(sy)
}

func (s *StoreActor) paimonRound(m *tableRound) {
	sy, ps := s.paimonSyncOf(m.id)
	if ps == nil || ps.stage != stageRound {
		return // a phase that ended; its pin goes with the checkpoint's Aborted
	}
	t := ps.table(m.table)
	if t == nil || t.round != 0 {
		panic(fmt.Sprintf("barrier: unexpected round of table %q for checkpoint %d", m.table, m.id))
	}
	ps.waiting--
	if m.done.Err != nil {
		ps.fail(fmt.Errorf("maintenance round of table %q: %w", m.table, m.done.Err))
	} else {
		t.round = m.done.SnapshotID
	}
	s.paimonStep(sy)
}

func (s *StoreActor) paimonListed(m *tableListed) {
	sy, ps := s.paimonSyncOf(m.id)
	if ps == nil || ps.stage != stageList {
		return
	}
	t := ps.table(m.table)
	if t == nil || t.files != nil {
		panic(fmt.Sprintf("barrier: unexpected listing of table %q for checkpoint %d", m.table, m.id))
	}
	ps.waiting--
	switch l := m.listed; {
	case l.Err != nil:
		ps.fail(fmt.Errorf("listing of table %q: %w", m.table, l.Err))
	case l.Files.SnapshotID != t.round:
		ps.fail(fmt.Errorf("listing of table %q: snapshot %d listed, %d asked", m.table, l.Files.SnapshotID, t.round))
	default:
		t.files = &l.Files
	}
	s.paimonStep(sy)
}

func (s *StoreActor) paimonPrepared(m *paimonPrepared) {
	sy, ps := s.paimonSyncOf(m.id)
	if ps == nil || ps.stage != stageList || !ps.jobOut {
		panic(fmt.Sprintf("barrier: preparation of checkpoint %d outside its sync phase", m.id))
	}
	ps.jobOut = false
	ps.repinned = m.repinned
	if m.err != nil {
		ps.fail(m.err)
	}
	for _, t := range ps.tables {
		t.meta = m.meta[t.name]
	}
	s.paimonStep(sy)
}

func (s *StoreActor) paimonLinked(m *paimonLinked) {
	sy, ps := s.paimonSyncOf(m.id)
	if ps == nil || ps.stage != stageLink || !ps.jobOut {
		panic(fmt.Sprintf("barrier: links of checkpoint %d outside its sync phase", m.id))
	}
	ps.jobOut = false
	if m.err != nil {
		ps.fail(m.err)
	}
	s.paimonStep(sy)
}

// paimonStep moves the phase on once its stage is over: to the next stage,
// to the hand-off, or (after a failure or an abort) to its end. Nothing
// ends while an executor job on the store is out.
func (s *StoreActor) paimonStep(sy *syncing) {
	ps := sy.paimon
	if ps.jobOut {
		return
	}
	// An aborted checkpoint still gets its rounds and the move of the reads
	// when its flush committed rows: one abort (say, another subtask's
	// decline) must not leave the store unreadable.
	if ps.err == nil && sy.aborted && !ps.unreadable() {
		ps.err = ErrCheckpointAborted
	}
	if ps.err != nil {
		err := ps.err
		if ps.unreadable() {
			err = fmt.Errorf("%w: %w", ErrStoreUnreadable, err)
		}
		s.syncing = nil
		if ps.stage == stageLink {
			s.removeDir(sy.chkDir)
		}
		if sy.aborted {
			s.ctx.Send(sy.barrier.ReplyTo, &SyncDone{ID: sy.barrier.ID, Err: err})
		} else {
			s.refuse(sy.barrier, err)
		}
		return
	}
	if ps.waiting > 0 {
		return
	}
	switch ps.stage {
	case stageRound:
		s.paimonList(sy)
	case stageList:
		s.paimonLink(sy)
	case stageLink:
		s.syncing = nil
		s.handOff(sy, ps.decision)
	}
}

// paimonList asks every table's Lister for the round's snapshot and, on the
// executor, moves the reads to it and names its metadata files.
func (s *StoreActor) paimonList(sy *syncing) {
	ps := sy.paimon
	ps.stage = stageList
	type pin struct {
		name  string
		tbl   *table.Table
		round int64
	}
	pins := make([]pin, 0, len(ps.tables))
	for _, t := range ps.tables {
		s.ctx.Send(t.agent, &agentList{id: sy.barrier.ID, snapshot: t.round})
		ps.waiting++
		tbl, _ := ps.backend.Table(t.name)
		pins = append(pins, pin{t.name, tbl, t.round})
	}
	ps.jobOut = true
	pb, id := ps.backend, sy.barrier.ID
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		m := &paimonPrepared{id: id, meta: map[string][]table.MetaFile{}}
		for _, p := range pins {
			if err := pb.PinSnapshot(p.name, p.round); err != nil {
				m.err = err
				return m
			}
		}
		m.repinned = true
		for _, p := range pins {
			meta, err := p.tbl.SnapshotMetaFiles(p.round)
			if err != nil {
				m.err = fmt.Errorf("table %q: %w", p.name, err)
				return m
			}
			m.meta[p.name] = meta
		}
		return m
	})
}

// paimonLink moves the tables' read pins to the round's snapshots (the
// reads are there now), decides what the checkpoint uploads and links
// exactly that into chk-<n>/.
func (s *StoreActor) paimonLink(sy *syncing) {
	ps := sy.paimon
	ps.stage = stageLink
	for _, t := range ps.tables {
		s.ctx.Send(t.agent, &agentPinView{snapshot: t.round})
	}
	root := ps.backend.Root()
	ps.links = map[string]string{}
	tables := make([]TableFiles, 0, len(ps.tables))
	for _, t := range ps.tables {
		tf := TableFiles{Name: t.name, SnapshotID: t.round}
		add := func(p string, size int64) {
			src := path.Join(sy.chkDir, t.name, p)
			ps.links[src] = path.Join(root, t.name, p)
			tf.Files = append(tf.Files, StateFile{Table: t.name, Path: p, Size: size, Source: src, Immutable: true})
		}
		for _, f := range t.meta {
			add(f.Path, f.Size)
		}
		for _, f := range t.files.Data {
			if len(f.Extra) > 0 {
				ps.fail(fmt.Errorf("table %q: data file %s has extra files, which checkpoints do not carry", t.name, f.Path))
				s.paimonStep(sy)
				return
			}
			add(f.Path, f.Size)
		}
		for _, f := range t.files.Index {
			add(f.Path, f.Size)
		}
		tables = append(tables, tf)
	}
	d, err := s.history.Decide(sy.barrier.ID, sy.barrier.Kind, tables)
	if err != nil {
		ps.fail(err)
		s.paimonStep(sy)
		return
	}
	ps.decision = d
	links := make([][2]string, 0, len(d.Uploads))
	for _, u := range d.Uploads {
		links = append(links, [2]string{ps.links[u.Source], u.Source})
	}
	ps.jobOut = true
	fio, id, dir := s.cfg.FileIO, sy.barrier.ID, sy.chkDir
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		for _, l := range links {
			if err := fio.Link(l[0], l[1]); err != nil {
				return &paimonLinked{id: id, err: fmt.Errorf("link %s into %s: %w", l[0], dir, err)}
			}
		}
		return &paimonLinked{id: id}
	})
}

// tableAgent returns the agent of a paimon state table, spawning it (and
// with it the table's Maintainer and Lister) on first sight.
func (s *StoreActor) tableAgent(pb *subtask.PaimonBackend, name string) (*actor.PID, error) {
	if pid, ok := s.agents[name]; ok {
		return pid, nil
	}
	tbl, ok := pb.Table(name)
	if !ok {
		return nil, fmt.Errorf("paimon store has no table %q", name)
	}
	opts := compaction.Options{Config: s.cfg.Maintenance, Every: s.cfg.MaintenanceEvery}
	if ttl, _ := pb.TTL(name); ttl > 0 {
		opts.Config.TTL = &compaction.TTL{Field: subtask.ColumnWriteTime, Millis: ttl}
	}
	pid, err := s.sys.SpawnChild(s.ctx, "paimon-"+name, newTableAgent(s.sys, name, tbl, s.ctx.Self(), opts))
	if err != nil {
		return nil, fmt.Errorf("maintenance of table %q: %w", name, err)
	}
	s.agents[name] = pid
	s.agentOrder = append(s.agentOrder, pid)
	return pid, nil
}

// unpin tells every table's maintenance that checkpoint id no longer needs
// its round's snapshot (and, with upTo, no earlier checkpoint does).
func (s *StoreActor) unpin(id CheckpointID, upTo bool) {
	for _, pid := range s.agentOrder {
		s.ctx.Send(pid, &agentUnpin{id: id, upTo: upTo})
	}
}

// backpressure forwards the store's verdict, stalled while any table is,
// when it flips.
func (s *StoreActor) backpressure(m *tableBackpressure) {
	was := s.stalledCount() > 0
	s.stalled[m.table] = m.b
	if now := s.stalledCount() > 0; now != was && s.cfg.Backpressure != nil {
		runs := 0
		for _, b := range s.stalled {
			runs = max(runs, b.SortedRuns)
		}
		s.ctx.Send(s.cfg.Backpressure, &compaction.BackpressureChanged{Backpressure: compaction.Backpressure{Stalled: now, SortedRuns: runs}})
	}
}

func (s *StoreActor) stalledCount() int {
	n := 0
	for _, b := range s.stalled {
		if b.Stalled {
			n++
		}
	}
	return n
}
