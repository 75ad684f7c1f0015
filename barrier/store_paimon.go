package barrier

import (
	"errors"
	"fmt"
	"maps"
	"path"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/listing"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// paimonPhase is checkpoint n's phase of a paimon store, from the freeze
// of its write buffers to the hand-off of its upload, one stage at a time:
//
//	freeze         (executor, the store lent) the previous checkpoint's
//	               frozen flush released — reads move to its rounds'
//	               snapshots, or after a failure its rows stay for this
//	               freeze to take in — and the write buffers frozen;
//	               SyncDone goes at once: the subtask resumes and reads
//	               live buffer > frozen rows > pinned snapshot
//	commit         the frozen rows, one APPEND snapshot per table (executor)
//	round          every table's maintenance round (its Maintainer)
//	list           every table's live files at the round's snapshot (its
//	               Lister) and the snapshot's metadata files (executor)
//	link           the reuse decision, then hard links of exactly the files
//	               to upload into chk-<n>/ (executor)
//
// The tables of a stage run in parallel. Barrier(n+1) waits, the store lent,
// until phase n is settled: its rounds' snapshots known (the pins its
// release gives the reads) or the phase failed (its rows go into the next
// commit again; commits are idempotent row-wise). A failure declines n once
// no executor job of the phase is out; answers still on their way are
// recognized by their checkpoint id and dropped. An abort ends the phase
// too, but only once it is settled: the commit and the rounds always run,
// since the table is the store's live state.
type paimonPhase struct {
	barrier *Barrier
	chkDir  string
	frozen  *subtask.FrozenFlush
	tables  []*paimonSyncTable // in commit order
	stage   paimonStage
	waiting int  // answers of the stage's actors still to come
	jobOut  bool // an executor job of the phase is out
	err     error
	aborted bool
	// roundsOK: every table's round succeeded; the release of the frozen
	// flush moves the reads to the rounds' snapshots.
	roundsOK bool
	over     bool // handed off or failed
	decision *Decision
	links    map[string]string // link path in chk-<n>/ -> table file
}

type paimonStage uint8

const (
	stageCommit paimonStage = iota + 1
	stageRound
	stageList
	stageLink
)

type paimonSyncTable struct {
	name  string
	agent *actor.PID
	data  int64 // the commit's snapshot
	round int64 // the round's snapshot
	files *listing.LiveFiles
	meta  []table.MetaFile
}

// settled reports whether the next barrier's release may go: the rounds'
// snapshots are known, or the phase is over.
func (p *paimonPhase) settled() bool { return p.roundsOK || p.over }

// pins are the snapshots the reads move to when the frozen flush is
// released after its rounds.
func (p *paimonPhase) pins() map[string]int64 {
	pins := make(map[string]int64, len(p.tables))
	for _, t := range p.tables {
		pins[t.name] = t.round
	}
	return pins
}

// Messages the Store actor sends itself in a paimon phase.
type (
	paimonFrozen struct {
		id CheckpointID
		// released: the previous frozen flush was released; releaseErr:
		// not as asked (its rows stay under this freeze's, which takes
		// them in).
		released   bool
		releaseErr error
		frozen     *subtask.FrozenFlush
		tables     map[string]paimonTableRef // the frozen flush's tables
		err        error
	}
	paimonCommitted struct {
		id  CheckpointID
		cp  subtask.Checkpoint
		err error
	}
	paimonPrepared struct {
		id   CheckpointID
		meta map[string][]table.MetaFile
		err  error
	}
	paimonLinked struct {
		id  CheckpointID
		err error
	}
)

func (m *paimonFrozen) Trace() string {
	return fmt.Sprintf("id=%d released=%t err=%v", m.id, m.released, m.err)
}
func (m *paimonCommitted) Trace() string {
	return fmt.Sprintf("id=%d tables=%d err=%v", m.id, len(m.cp.Tables), m.err)
}
func (m *paimonPrepared) Trace() string { return fmt.Sprintf("id=%d err=%v", m.id, m.err) }
func (m *paimonLinked) Trace() string   { return fmt.Sprintf("id=%d err=%v", m.id, m.err) }

// paimonBarrier starts the sync phase of a paimon store: the freeze, once
// the previous phase is settled.
func (s *StoreActor) paimonBarrier(sy *syncing) {
	pb := sy.barrier.Store.Backend().(*subtask.PaimonBackend)
	if s.paimonBackend != nil && s.paimonBackend != pb {
		s.syncing = nil
		s.refuse(sy.barrier, errors.New("a paimon store actor serves one store; the barrier lends another"))
		return
	}
	s.paimonBackend = pb
	sy.paimonWait = true
	s.paimonFreeze()
}

// paimonFreeze releases the previous frozen flush and freezes the write
// buffers on the executor, once a barrier waits and the previous phase is
// settled.
func (s *StoreActor) paimonFreeze() {
	sy := s.syncing
	if sy == nil || !sy.paimonWait {
		return
	}
	prev := s.held
	if prev != nil && !prev.settled() {
		return
	}
	sy.paimonWait = false
	sy.jobOut = true
	var (
		f    *subtask.FrozenFlush
		ok   bool
		pins map[string]int64
	)
	if prev != nil {
		f, ok = prev.frozen, prev.roundsOK
		if ok {
			pins = prev.pins()
		}
	}
	store, id, pb, fence := sy.barrier.Store, sy.barrier.ID, s.paimonBackend, s.cfg.Fence
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		m := &paimonFrozen{id: id}
		m.err = fence.use(func() (err error) {
			if f != nil {
				m.releaseErr = store.Release(f, ok, pins)
				m.released = true
			}
			if m.frozen, err = store.Freeze(int64(id)); err == nil {
				m.tables = tableRefs(pb, m.frozen.Tables())
			}
			return err
		})
		return m
	})
}

// paimonTableRef is what the phase needs of a state table after SyncDone,
// when the store (and the backend's table map, which registering a state
// writes) is the subtask's again.
type paimonTableRef struct {
	tbl *table.Table
	ttl int64
}

// tableRefs takes the tables of a frozen flush from the backend; it runs
// while the store is lent.
func tableRefs(pb *subtask.PaimonBackend, names []string) map[string]paimonTableRef {
	refs := make(map[string]paimonTableRef, len(names))
	for _, name := range names {
		if tbl, ok := pb.Table(name); ok {
			ttl, _ := pb.TTL(name)
			refs[name] = paimonTableRef{tbl: tbl, ttl: ttl}
		}
	}
	return refs
}

// paimonFrozen ends the sync phase: the subtask resumes, and checkpoint n's
// phase goes on with the commit.
func (s *StoreActor) paimonFrozen(m *paimonFrozen) {
	sy := s.syncing
	if sy == nil || sy.barrier.ID != m.id || !sy.jobOut {
		panic(fmt.Sprintf("barrier: freeze of checkpoint %d outside its sync phase", m.id))
	}
	s.syncing = nil
	b := sy.barrier
	if prev := s.held; prev != nil && m.released {
		s.held = nil
		switch {
		case m.releaseErr != nil:
			// No read moved (Release opens every new view before it
			// switches any): every pin stays until a later release.
			s.sys.Logger().Warn("releasing a frozen flush; its rows go into the next commit again",
				"operator", s.cfg.Operator, "subtask", s.cfg.Subtask, "checkpoint", prev.barrier.ID, "err", m.releaseErr)
		case prev.roundsOK:
			for _, t := range prev.tables {
				s.ctx.Send(t.agent, &agentPinView{snapshot: t.round})
			}
		default:
			for _, t := range prev.tables {
				s.ctx.Send(t.agent, &agentPinView{next: true})
			}
		}
	}
	if m.err != nil {
		if sy.aborted {
			s.ctx.Send(b.ReplyTo, &SyncDone{ID: b.ID, Err: m.err})
		} else {
			s.refuse(b, m.err)
		}
		return
	}
	if s.paimonTables == nil {
		s.paimonTables = map[string]paimonTableRef{}
	}
	maps.Copy(s.paimonTables, m.tables)
	p := &paimonPhase{barrier: b, chkDir: sy.chkDir, frozen: m.frozen, stage: stageCommit, jobOut: true, aborted: sy.aborted}
	s.held = p
	s.phases[b.ID] = p
	done := &SyncDone{ID: b.ID}
	if p.aborted {
		done.Err = ErrCheckpointAborted
	}
	s.ctx.Send(b.ReplyTo, done)
	f, id, fence := m.frozen, b.ID, s.cfg.Fence
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		m := &paimonCommitted{id: id}
		m.err = fence.use(func() (err error) {
			m.cp, err = f.Commit()
			return err
		})
		return m
	})
}

// paimonPhaseOf returns the paimon phase of checkpoint id, or nil for an
// answer that belongs to a phase already over.
func (s *StoreActor) paimonPhaseOf(id CheckpointID) *paimonPhase {
	return s.phases[id]
}

func (p *paimonPhase) table(name string) *paimonSyncTable {
	for _, t := range p.tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (p *paimonPhase) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (s *StoreActor) paimonCommitted(m *paimonCommitted) {
	p := s.paimonPhaseOf(m.id)
	if p == nil || p.stage != stageCommit || !p.jobOut {
		panic(fmt.Sprintf("barrier: commit result of checkpoint %d outside its phase", m.id))
	}
	p.jobOut = false
	if m.err != nil {
		p.fail(m.err) // the frozen rows stay readable for the next freeze
		s.paimonStep(p)
		return
	}
	p.stage = stageRound
	for _, tc := range m.cp.Tables {
		if tc.Snapshot == 0 {
			continue // never committed: nothing to checkpoint
		}
		_, known := s.agents[tc.Name]
		agent, err := s.tableAgent(tc.Name)
		if err != nil {
			p.fail(err)
			break
		}
		if p.aborted && !known {
			// The abort's unpin went out before the table had an agent.
			s.ctx.Send(agent, &agentUnpin{id: m.id})
		}
		p.tables = append(p.tables, &paimonSyncTable{name: tc.Name, agent: agent, data: tc.Snapshot})
	}
	if p.err == nil {
		for _, t := range p.tables {
			s.ctx.Send(t.agent, &agentRound{id: m.id, snapshot: t.data})
			p.waiting++
		}
	}
	s.paimonStep(p)
}

func (s *StoreActor) paimonRound(m *tableRound) {
	p := s.paimonPhaseOf(m.id)
	if p == nil || p.stage != stageRound {
		return // a phase that ended; its pin goes with the checkpoint's Aborted
	}
	t := p.table(m.table)
	if t == nil || t.round != 0 {
		panic(fmt.Sprintf("barrier: unexpected round of table %q for checkpoint %d", m.table, m.id))
	}
	p.waiting--
	if m.done.Err != nil {
		p.fail(fmt.Errorf("maintenance round of table %q: %w", m.table, m.done.Err))
	} else {
		t.round = m.done.SnapshotID
	}
	s.paimonStep(p)
}

func (s *StoreActor) paimonListed(m *tableListed) {
	p := s.paimonPhaseOf(m.id)
	if p == nil || p.stage != stageList {
		return
	}
	t := p.table(m.table)
	if t == nil || t.files != nil {
		panic(fmt.Sprintf("barrier: unexpected listing of table %q for checkpoint %d", m.table, m.id))
	}
	p.waiting--
	switch l := m.listed; {
	case l.Err != nil:
		p.fail(fmt.Errorf("listing of table %q: %w", m.table, l.Err))
	case l.Files.SnapshotID != t.round:
		p.fail(fmt.Errorf("listing of table %q: snapshot %d listed, %d asked", m.table, l.Files.SnapshotID, t.round))
	default:
		t.files = &l.Files
	}
	s.paimonStep(p)
}

func (s *StoreActor) paimonPrepared(m *paimonPrepared) {
	p := s.paimonPhaseOf(m.id)
	if p == nil || p.stage != stageList || !p.jobOut {
		panic(fmt.Sprintf("barrier: metadata files of checkpoint %d outside its phase", m.id))
	}
	p.jobOut = false
	if m.err != nil {
		p.fail(m.err)
	}
	for _, t := range p.tables {
		t.meta = m.meta[t.name]
	}
	s.paimonStep(p)
}

func (s *StoreActor) paimonLinked(m *paimonLinked) {
	p := s.paimonPhaseOf(m.id)
	if p == nil || p.stage != stageLink || !p.jobOut {
		panic(fmt.Sprintf("barrier: links of checkpoint %d outside its phase", m.id))
	}
	p.jobOut = false
	if m.err != nil {
		p.fail(m.err)
	}
	s.paimonStep(p)
}

// paimonStep moves the phase on once its stage is over: to the next stage,
// to the hand-off, or (after a failure, or an abort once the phase is
// settled) to its end. Nothing ends while an executor job of the phase is
// out. A barrier waiting for the phase to settle goes on.
func (s *StoreActor) paimonStep(p *paimonPhase) {
	defer s.paimonFreeze()
	if p.jobOut {
		return
	}
	if p.err == nil && p.aborted && p.roundsOK {
		p.err = ErrCheckpointAborted
	}
	if p.waiting > 0 {
		// Even a failed phase waits for the stage's answers: a round still
		// writes into the table, and Drain must not answer before it ends.
		return
	}
	if p.err != nil {
		s.paimonEnd(p)
		return
	}
	switch p.stage {
	case stageRound:
		p.roundsOK = true
		// Until the next barrier moves the reads there, the rounds'
		// snapshots must outlive the checkpoint's own pin, which its
		// Complete may drop first.
		for _, t := range p.tables {
			s.ctx.Send(t.agent, &agentPinView{snapshot: t.round, next: true})
		}
		if p.aborted {
			p.err = ErrCheckpointAborted
			s.paimonEnd(p)
			return
		}
		s.paimonList(p)
	case stageList:
		s.paimonLink(p)
	case stageLink:
		p.over = true
		delete(s.phases, p.barrier.ID)
		s.handOff(p.barrier, BackendPaimon, p.chkDir, p.decision)
	}
}

// paimonEnd ends a phase that failed or was aborted: it declines the
// checkpoint unless the abort came first. The frozen flush stays held for
// the next barrier's release.
func (s *StoreActor) paimonEnd(p *paimonPhase) {
	p.over = true
	delete(s.phases, p.barrier.ID)
	if p.stage == stageLink {
		s.removeDir(p.chkDir)
	}
	if !p.aborted {
		s.decline(p.barrier.ID, p.err)
	}
}

// paimonList asks every table's Lister for the round's snapshot and, on the
// executor, names the snapshot's metadata files.
func (s *StoreActor) paimonList(p *paimonPhase) {
	p.stage = stageList
	type round struct {
		name  string
		tbl   *table.Table
		round int64
	}
	rounds := make([]round, 0, len(p.tables))
	for _, t := range p.tables {
		s.ctx.Send(t.agent, &agentList{id: p.barrier.ID, snapshot: t.round})
		p.waiting++
		rounds = append(rounds, round{t.name, s.paimonTables[t.name].tbl, t.round})
	}
	p.jobOut = true
	id, fence := p.barrier.ID, s.cfg.Fence
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		m := &paimonPrepared{id: id, meta: map[string][]table.MetaFile{}}
		m.err = fence.use(func() error {
			for _, r := range rounds {
				meta, err := r.tbl.SnapshotMetaFiles(r.round)
				if err != nil {
					return fmt.Errorf("table %q: %w", r.name, err)
				}
				m.meta[r.name] = meta
			}
			return nil
		})
		return m
	})
}

// paimonLink decides what the checkpoint uploads and links exactly that
// into chk-<n>/.
func (s *StoreActor) paimonLink(p *paimonPhase) {
	p.stage = stageLink
	root := s.paimonBackend.Root()
	p.links = map[string]string{}
	tables := make([]TableFiles, 0, len(p.tables))
	for _, t := range p.tables {
		tf := TableFiles{Name: t.name, SnapshotID: t.round}
		add := func(f string, size int64) {
			src := path.Join(p.chkDir, t.name, f)
			p.links[src] = path.Join(root, t.name, f)
			tf.Files = append(tf.Files, StateFile{Table: t.name, Path: f, Size: size, Source: src, Immutable: true})
		}
		for _, f := range t.meta {
			add(f.Path, f.Size)
		}
		for _, f := range t.files.Data {
			if len(f.Extra) > 0 {
				p.fail(fmt.Errorf("table %q: data file %s has extra files, which checkpoints do not carry", t.name, f.Path))
				s.paimonStep(p)
				return
			}
			add(f.Path, f.Size)
		}
		for _, f := range t.files.Index {
			add(f.Path, f.Size)
		}
		tables = append(tables, tf)
	}
	d, err := s.history.Decide(p.barrier.ID, p.barrier.Kind, tables)
	if err == nil {
		err = s.history.DecideExtras(d, p.barrier.Pieces)
	}
	if err != nil {
		p.fail(err)
		s.paimonStep(p)
		return
	}
	p.decision = d
	links := make([][2]string, 0, len(d.Uploads))
	for _, u := range d.Uploads {
		if u.Source != "" { // not an extra piece, which is in memory
			links = append(links, [2]string{p.links[u.Source], u.Source})
		}
	}
	p.jobOut = true
	fio, id, dir, fence := s.cfg.FileIO, p.barrier.ID, p.chkDir, s.cfg.Fence
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		return &paimonLinked{id: id, err: fence.use(func() error {
			for _, l := range links {
				if err := fio.Link(l[0], l[1]); err != nil {
					return fmt.Errorf("link %s into %s: %w", l[0], dir, err)
				}
			}
			return nil
		})}
	})
}

// tableAgent returns the agent of a paimon state table, spawning it (and
// with it the table's Maintainer and Lister) on first sight.
func (s *StoreActor) tableAgent(name string) (*actor.PID, error) {
	if pid, ok := s.agents[name]; ok {
		return pid, nil
	}
	ref, ok := s.paimonTables[name]
	if !ok {
		return nil, fmt.Errorf("paimon store has no table %q", name)
	}
	opts := compaction.Options{Config: s.cfg.Maintenance, Every: s.cfg.MaintenanceEvery}
	if ref.ttl > 0 {
		opts.Config.TTL = &compaction.TTL{Field: subtask.ColumnWriteTime, Millis: ref.ttl}
	}
	pid, err := s.sys.SpawnChild(s.ctx, "paimon-"+name, newTableAgent(s.sys, name, ref.tbl, s.ctx.Self(), opts))
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
