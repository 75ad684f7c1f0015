package barrier

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// Barrier starts the sync phase of checkpoint ID at one subtask. The
// subtask lends its store (nil for a subtask without keyed state) and
// processes nothing until *SyncDone arrives at ReplyTo; meanwhile only the
// Store actor touches the store.
type Barrier struct {
	ID    CheckpointID
	Kind  Kind
	Store *subtask.Store
	// Extras is the subtask's state outside its store (source offsets, sink
	// transactions), keyed by owner; it goes into the acknowledgement.
	Extras map[string]Extra
	// Pieces continue the extras with pieces that later checkpoints may
	// hold again (a sink's transactions): each is uploaded once and
	// referenced after (History.DecideExtras).
	Pieces  []ExtraPiece
	ReplyTo *actor.PID
}

func (m *Barrier) Trace() string { return fmt.Sprintf("id=%d %s", m.ID, m.Kind) }

// SyncDone ends the sync phase of checkpoint ID: the subtask resumes and may
// use its store again. Err says the checkpoint failed at this subtask (it was
// declined); the store stays usable either way, and a failed flush keeps its
// write buffer for the next checkpoint. A paimon store's SyncDone comes
// right after the freeze of its write buffers, before the checkpoint's
// commit: a failure after it declines the checkpoint without a word to the
// subtask, whose reads see the frozen rows until a later barrier releases
// them.
type SyncDone struct {
	ID  CheckpointID
	Err error
}

func (m *SyncDone) Trace() string { return fmt.Sprintf("id=%d err=%v", m.ID, m.Err) }

// UploadStats tells StoreConfig.Stats what checkpoint ID's upload at one
// subtask carries, when the Store actor hands it to the uploader: the files
// to upload and the files referenced from earlier checkpoints.
type UploadStats struct {
	ID                       CheckpointID
	Uploads, Reused          int
	UploadBytes, ReusedBytes int64
}

func (m *UploadStats) Trace() string {
	return fmt.Sprintf("id=%d uploads=%d/%d reused=%d/%d", m.ID, m.Uploads, m.UploadBytes, m.Reused, m.ReusedBytes)
}

// ErrCheckpointAborted: the checkpoint was aborted before this subtask's
// part of it finished.
var ErrCheckpointAborted = errors.New("checkpoint aborted")

// StoreConfig configures the Store actor of one operator subtask.
type StoreConfig struct {
	Operator  string
	Subtask   int
	KeyGroups keygroup.Range
	// WorkDir holds the subtask's chk-<id>/ directories.
	WorkDir string
	FileIO  table.FileIO
	// Uploader runs the uploads; Coordinator gets Ack and Decline.
	Uploader, Coordinator *actor.PID
	// History is the store run's reuse history: NewHistory with a fresh
	// backend id on a fresh start, RestoredStore.History after a restore.
	History *History

	// Maintenance is the policy of the Maintainer that each state table of
	// a paimon store gets when its first barrier sees it; the TTL is the
	// state's own (its rows' write times against the system clock, the
	// clock the subtask's Store.SetNow must follow too). MaintenanceEvery
	// kicks maintenance periodically (compaction.Options.Every).
	Maintenance      compaction.Config
	MaintenanceEvery time.Duration
	// Backpressure, when set, receives *compaction.BackpressureChanged
	// whenever the store's verdict flips: stalled while any of its tables
	// has too many sorted runs.
	Backpressure *actor.PID
	// Stats, when set, receives *UploadStats of every upload handed off.
	Stats *actor.PID
	// Fence, when set, is shared with whoever closes the store: the
	// actor's executor jobs use the store only while it is open, and its
	// close waits for the ones running. Without one, the store must be
	// closed only once the system's executor is idle.
	Fence *StoreFence
}

// StoreActor takes the checkpoints of one operator subtask's store. At
// Barrier(n) of a memory or pebble store it runs the sync phase while the
// subtask waits: the flush of the write buffer and the listing of the
// checkpoint's files (on the executor, since both block on I/O), then the
// reuse decision against the last checkpoint confirmed to this store, and it
// hands exactly the files to upload to the Uploader before it answers
// SyncDone. A paimon store's sync phase is only the freeze of its write
// buffers: the commit, maintenance round, listing, decision and links run
// while the subtask goes on (paimonPhase). When the upload is over it
// removes chk-<n>/ and acknowledges (or declines) to the coordinator.
// Complete(n) advances the reuse base; Aborted(n) cancels n's upload and
// forgets n.
type StoreActor struct {
	cfg     StoreConfig
	sys     *actors.System
	ctx     actor.Context
	history *History
	ready   bool     // stale chk-* directories removed
	queued  *Barrier // a barrier that arrived before ready
	syncing *syncing // the sync phase in progress: the store is lent
	uploads map[CheckpointID]*uploading
	aborted map[CheckpointID]bool
	removes int // chk-<n>/ removals in flight
	idle    []*actor.PID

	// A paimon store: its backend, its state tables as the last freeze saw
	// them (the backend's own map is the subtask's once SyncDone went), an
	// agent per state table (maintainer, lister, pins) in order of first
	// sight, the tables' backpressure.
	paimonBackend *subtask.PaimonBackend
	paimonTables  map[string]paimonTableRef
	agents        map[string]*actor.PID
	agentOrder    []*actor.PID
	stalled       map[string]compaction.Backpressure
	// phases are the paimon phases past their freeze and before their
	// hand-off; held is the newest phase whose frozen flush the next
	// barrier releases (it may be over already).
	phases map[CheckpointID]*paimonPhase
	held   *paimonPhase
}

// Drain asks an actor (Store actor, Uploader) to answer *Drained once no work
// of it is in flight: no sync phase, upload, deletion or directory removal.
type Drain struct{}

// Drained answers Drain.
type Drained struct{}

type syncing struct {
	barrier *Barrier
	backend string
	chkDir  string
	aborted bool
	// A paimon store's barrier waits until the previous phase is settled,
	// then its release and freeze run on the executor.
	paimonWait, jobOut bool
}

type uploading struct {
	decision *Decision
	backend  string
	chkDir   string
	extras   map[string]Extra
	aborted  bool
}

// NewStoreActor returns the producer of a Store actor. It serves one
// spawn (oneSpawn): a supervisor's restart after a panic gets an actor that
// stops at once, so the job fails over (the parent or a watcher sees it
// terminate) and restores from its last completed checkpoint, as it does
// when a panicking actor is stopped. The Store actor's state cannot be
// rebuilt from its configuration: a paimon store's
// frozen flush stays held (its commit may still be running, so it can be
// neither released nor folded into a new freeze, and every later freeze is
// refused while it is held), the table agents that kept the read view's pin
// stop with the restart (new maintainers without it would expire files the
// subtask reads), and only the lost instance knew the uploads in flight
// (their acknowledgements, and the blobs a failed one leaves behind) and
// the chk-<n>/ directories they read, which a fresh start removes as stale.
// Answers to the lost instance's requests find the actor gone.
func NewStoreActor(sys *actors.System, cfg StoreConfig) actor.Producer {
	return oneSpawn(sys, func() actor.Actor {
		return &StoreActor{cfg: cfg, sys: sys, history: cfg.History,
			uploads: map[CheckpointID]*uploading{}, aborted: map[CheckpointID]bool{},
			agents: map[string]*actor.PID{}, stalled: map[string]compaction.Backpressure{},
			phases: map[CheckpointID]*paimonPhase{}}
	}, "store actor restarted after a panic; it stops so that the job fails over",
		"operator", cfg.Operator, "subtask", cfg.Subtask)
}

// Messages the Store actor sends itself.
type (
	staleRemoved struct{ err error }
	storeFlushed struct {
		id     CheckpointID
		tables []TableFiles
		err    error
	}
	chkRemoved struct {
		dir string
		err error
	}
)

func (m *staleRemoved) Trace() string { return fmt.Sprintf("err=%v", m.err) }
func (m *storeFlushed) Trace() string {
	return fmt.Sprintf("id=%d tables=%d err=%v", m.id, len(m.tables), m.err)
}
func (m *chkRemoved) Trace() string { return fmt.Sprintf("err=%v", m.err) }

func (s *StoreActor) Receive(ctx actor.Context) {
	s.ctx = ctx
	defer func() { s.ctx = nil }()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		if s.history == nil {
			panic("barrier: store actor without a history")
		}
		fio, dir := s.cfg.FileIO, s.cfg.WorkDir
		s.sys.Executor().Submit(ctx.Self(), func() any { return &staleRemoved{err: removeStale(fio, dir)} })
	case *staleRemoved:
		if m.err != nil {
			s.sys.Logger().Warn("removing stale checkpoint directories", "dir", s.cfg.WorkDir, "err", m.err)
		}
		s.ready = true
		if b := s.queued; b != nil {
			s.queued = nil
			s.barrier(b)
		}
	case *Barrier:
		if !s.ready {
			if s.queued != nil {
				s.refuse(m, fmt.Errorf("barrier %d while barrier %d waits", m.ID, s.queued.ID))
				return
			}
			s.queued = m
			return
		}
		s.barrier(m)
	case *storeFlushed:
		s.flushed(m)
	case *paimonFrozen:
		s.paimonFrozen(m)
	case *paimonCommitted:
		s.paimonCommitted(m)
	case *tableRound:
		s.paimonRound(m)
	case *tableListed:
		s.paimonListed(m)
	case *paimonPrepared:
		s.paimonPrepared(m)
	case *paimonLinked:
		s.paimonLinked(m)
	case *tableBackpressure:
		s.backpressure(m)
	case *UploadDone:
		s.uploaded(m)
	case *Complete:
		if m.Kind == KindCheckpoint {
			s.history.Confirm(m.ID)
		}
		// A savepoint's completion releases only its own pin: checkpoints
		// before it may still be in flight.
		s.unpin(m.ID, m.Kind == KindCheckpoint)
	case *Aborted:
		s.abort(m.ID)
		s.unpin(m.ID, false)
	case *chkRemoved:
		s.removes--
		if m.err != nil {
			s.sys.Logger().Warn("removing checkpoint directory", "dir", m.dir, "err", m.err)
		}
	case *Drain:
		if ctx.Sender() != nil {
			s.idle = append(s.idle, ctx.Sender())
		}
	}
	if s.ready && s.syncing == nil && len(s.phases) == 0 && len(s.uploads) == 0 && s.removes == 0 {
		for _, to := range s.idle {
			ctx.Send(to, &Drained{})
		}
		s.idle = nil
	}
}

func (s *StoreActor) barrier(b *Barrier) {
	if s.syncing != nil {
		s.refuse(b, fmt.Errorf("barrier %d during the sync phase of %d", b.ID, s.syncing.barrier.ID))
		return
	}
	for id := range s.aborted {
		if id < b.ID && s.uploads[id] == nil {
			delete(s.aborted, id)
		}
	}
	if s.aborted[b.ID] {
		s.ctx.Send(b.ReplyTo, &SyncDone{ID: b.ID, Err: ErrCheckpointAborted})
		return
	}
	if b.Store == nil {
		s.syncing = &syncing{barrier: b, backend: BackendNone}
		s.flushed(&storeFlushed{id: b.ID})
		return
	}
	backend, err := BackendKind(b.Store.Backend())
	if err != nil {
		s.refuse(b, err)
		return
	}
	sy := &syncing{barrier: b, backend: backend, chkDir: CheckpointDir(s.cfg.WorkDir, b.ID)}
	s.syncing = sy
	if backend == BackendPaimon {
		s.paimonBarrier(sy)
		return
	}
	store, fio, id, dir, fence := b.Store, s.cfg.FileIO, b.ID, sy.chkDir, s.cfg.Fence
	s.sys.Executor().Submit(s.ctx.Self(), func() any {
		m := &storeFlushed{id: id}
		m.err = fence.use(func() (err error) {
			m.tables, err = flushStore(store, backend, id, dir, fio)
			return err
		})
		return m
	})
}

// refuse declines a barrier and ends its sync phase.
func (s *StoreActor) refuse(b *Barrier, err error) {
	s.ctx.Send(b.ReplyTo, &SyncDone{ID: b.ID, Err: s.decline(b.ID, err)})
}

// decline declines checkpoint id at this subtask and returns the error it
// sent.
func (s *StoreActor) decline(id CheckpointID, err error) error {
	err = fmt.Errorf("subtask %d of %q: %w", s.cfg.Subtask, s.cfg.Operator, err)
	s.ctx.Send(s.cfg.Coordinator, &Decline{ID: id, Operator: s.cfg.Operator, Subtask: s.cfg.Subtask, Err: err})
	return err
}

// flushed decides what checkpoint id uploads and hands it to the uploader.
// The sync phase ends here: the subtask resumes.
func (s *StoreActor) flushed(m *storeFlushed) {
	sy := s.syncing
	if sy == nil || sy.barrier.ID != m.id {
		panic(fmt.Sprintf("barrier: flush result of checkpoint %d outside its sync phase", m.id))
	}
	s.syncing = nil
	b := sy.barrier
	err := m.err
	var d *Decision
	if err == nil && sy.aborted {
		err = ErrCheckpointAborted
	}
	if err == nil {
		d, err = s.history.Decide(b.ID, b.Kind, m.tables)
	}
	if err == nil {
		err = s.history.DecideExtras(d, b.Pieces)
	}
	if err != nil {
		if m.err == nil {
			s.removeDir(sy.chkDir) // a failed flush removed it already
		}
		if sy.aborted {
			s.ctx.Send(b.ReplyTo, &SyncDone{ID: b.ID, Err: err})
		} else {
			s.refuse(b, err)
		}
		return
	}
	s.handOff(b, sy.backend, sy.chkDir, d)
	s.ctx.Send(b.ReplyTo, &SyncDone{ID: b.ID})
}

// handOff hands checkpoint n's upload to the uploader.
func (s *StoreActor) handOff(b *Barrier, backend, chkDir string, d *Decision) {
	s.uploads[b.ID] = &uploading{decision: d, backend: backend, chkDir: chkDir, extras: b.Extras}
	s.ctx.Send(s.cfg.Uploader, &Upload{ID: b.ID, Files: d.Uploads, ReplyTo: s.ctx.Self()})
	if s.cfg.Stats == nil {
		return
	}
	st := &UploadStats{ID: b.ID, Uploads: len(d.Uploads), UploadBytes: d.UploadBytes(), ReusedBytes: d.ReusedBytes()}
	for _, t := range d.Tables {
		for _, f := range t.Files {
			if !f.Uploaded {
				st.Reused++
			}
		}
	}
	for _, f := range d.ExtraFiles {
		if !f.Uploaded {
			st.Reused++
		}
	}
	s.ctx.Send(s.cfg.Stats, st)
}

// uploaded acknowledges or declines a checkpoint once its upload is over.
// An upload that succeeded after its checkpoint was aborted is still
// acknowledged: the coordinator answers a late acknowledgement by deleting
// its uploads. A failed one is declined, after an abort too when its
// discard left blobs behind.
func (s *StoreActor) uploaded(m *UploadDone) {
	u := s.uploads[m.ID]
	if u == nil {
		return
	}
	delete(s.uploads, m.ID)
	s.removeDir(u.chkDir)
	if m.Err != nil {
		// The blobs the discard could not delete go to the coordinator even
		// when the checkpoint is aborted already: nothing else knows them.
		if !u.aborted || len(m.Leaked) > 0 {
			err := fmt.Errorf("subtask %d of %q: %w", s.cfg.Subtask, s.cfg.Operator, m.Err)
			s.ctx.Send(s.cfg.Coordinator, &Decline{ID: m.ID, Operator: s.cfg.Operator, Subtask: s.cfg.Subtask, Err: err, Leaked: m.Leaked})
		}
		return
	}
	if !u.aborted {
		s.history.Acknowledged(u.decision)
	}
	state := SubtaskState{
		Index: s.cfg.Subtask, KeyGroups: s.cfg.KeyGroups, Backend: u.backend,
		BackendID: s.history.BackendID(), Tables: u.decision.Tables, Extras: u.extras, ExtraFiles: u.decision.ExtraFiles,
	}
	s.ctx.Send(s.cfg.Coordinator, &Ack{ID: m.ID, Operator: s.cfg.Operator, State: state})
}

// abort forgets checkpoint id: it never becomes a reuse base, its upload is
// cancelled (the uploader deletes what landed) and its directory removed.
func (s *StoreActor) abort(id CheckpointID) {
	s.history.Forget(id)
	s.aborted[id] = true
	if sy := s.syncing; sy != nil && sy.barrier.ID == id {
		sy.aborted = true
		if sy.paimonWait {
			// Still waiting for the previous phase: the store goes back
			// untouched.
			s.syncing = nil
			s.ctx.Send(sy.barrier.ReplyTo, &SyncDone{ID: id, Err: ErrCheckpointAborted})
		}
	}
	if p := s.phases[id]; p != nil {
		p.aborted = true
		s.paimonStep(p)
	}
	if u := s.uploads[id]; u != nil && !u.aborted {
		u.aborted = true
		s.ctx.Send(s.cfg.Uploader, &CancelUpload{ID: id, ReplyTo: s.ctx.Self()})
	}
}

func (s *StoreActor) removeDir(dir string) {
	if dir == "" {
		return
	}
	s.removes++
	fio := s.cfg.FileIO
	s.sys.Executor().Submit(s.ctx.Self(), func() any { return &chkRemoved{dir: dir, err: fio.RemoveAll(dir)} })
}

// removeStale removes the chk-* directories a previous run of the store left
// in dir.
func removeStale(fio table.FileIO, dir string) error {
	names, err := fio.List(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if strings.HasPrefix(n, checkpointDirPrefix) {
			errs = append(errs, fio.RemoveAll(dir+"/"+n))
		}
	}
	return errors.Join(errs...)
}
