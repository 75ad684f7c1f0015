package barrier

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// Trigger asks the Coordinator for a checkpoint or savepoint. The sender
// gets *Triggered. Triggers that arrive before the coordinator has recovered
// wait for it.
type Trigger struct{ Kind Kind }

func (m *Trigger) Trace() string { return m.Kind.String() }

// Triggered answers a Trigger: the id of the checkpoint that started, or why
// none did.
type Triggered struct {
	ID   CheckpointID
	Kind Kind
	Err  error
}

func (m *Triggered) Trace() string { return fmt.Sprintf("id=%d %s err=%v", m.ID, m.Kind, m.Err) }

// TriggerCheckpoint goes to the coordinator's trigger target (the job): inject
// barrier ID at the sources. Every subtask then takes its sync phase and
// acknowledges with *Ack or *Decline.
type TriggerCheckpoint struct {
	ID              CheckpointID
	Kind            Kind
	TimestampMillis int64
}

func (m *TriggerCheckpoint) Trace() string { return fmt.Sprintf("id=%d %s", m.ID, m.Kind) }

// Ack is one subtask's acknowledgement of checkpoint ID: its state with
// placeholders for files an earlier checkpoint uploaded.
type Ack struct {
	ID       CheckpointID
	Operator string
	State    SubtaskState
}

func (m *Ack) Trace() string {
	return fmt.Sprintf("id=%d op=%s subtask=%d", m.ID, m.Operator, m.State.Index)
}

// Decline says one subtask cannot take checkpoint ID; the checkpoint aborts.
// Leaked hands over the blobs of the subtask's upload that its discard could
// not delete (UploadDone.Leaked): the coordinator deletes them again and
// reports those that still fail in Quiet.Leaked. A store sends a Decline with
// Leaked also for a checkpoint that is aborted already; the coordinator then
// only takes the blobs.
type Decline struct {
	ID       CheckpointID
	Operator string
	Subtask  int
	Err      error
	Leaked   []string
}

func (m *Decline) Trace() string {
	return fmt.Sprintf("id=%d op=%s subtask=%d err=%v leaked=%d", m.ID, m.Operator, m.Subtask, m.Err, len(m.Leaked))
}

// Complete tells a subscriber (every store, every sink) that checkpoint ID
// completed: its metadata is written. Notifications may arrive late, out of
// order, or never.
type Complete struct {
	ID       CheckpointID
	Kind     Kind
	Metadata string // the metadata blob
}

func (m *Complete) Trace() string { return fmt.Sprintf("id=%d %s", m.ID, m.Kind) }

// Aborted tells a subscriber that checkpoint ID will never complete.
type Aborted struct {
	ID  CheckpointID
	Err error
}

func (m *Aborted) Trace() string { return fmt.Sprintf("id=%d err=%v", m.ID, m.Err) }

// Subscribe adds PID to the receivers of Complete and Aborted.
type Subscribe struct{ PID *actor.PID }

// DisposeSavepoint deletes a completed savepoint; the sender gets
// *Disposed.
type DisposeSavepoint struct{ ID CheckpointID }

// Disposed answers DisposeSavepoint.
type Disposed struct {
	ID  CheckpointID
	Err error
}

// Recovered goes to CoordinatorConfig.RecoveredTo once the coordinator has
// read the checkpoints its blob store holds and swept the orphans: the
// newest completed checkpoint is the one to restore from.
type Recovered struct {
	// Latest is the newest retained checkpoint, nil when there is none.
	Latest     *Metadata
	LatestBlob string
	Retained   []CheckpointID
	Savepoints []CheckpointID
	// Swept counts the orphan blobs the sweep deleted; Unreadable lists
	// metadata blobs that could not be decoded (their directories are left
	// alone).
	Swept      int
	Unreadable []string
	Err        error
}

// Quiesce asks the coordinator to answer *Quiet once none of its blob
// writes or deletions is in flight (for tests and orderly shutdown).
type Quiesce struct{}

// Quiet answers Quiesce with the coordinator's view at that moment.
type Quiet struct {
	Retained   []CheckpointID
	Pending    []CheckpointID
	Savepoints []CheckpointID
	// LiveBlobs is every blob a retained checkpoint, savepoint or pending
	// checkpoint references: anything else in the store is an orphan.
	LiveBlobs []string
	// Leaked lists blobs whose deletion failed; the next start's sweep
	// removes them.
	Leaked []string
}

// CoordinatorConfig configures a Coordinator.
type CoordinatorConfig struct {
	JobID string
	Blobs BlobStore
	// Operators lists the operators whose subtasks acknowledge checkpoints.
	Operators []OperatorSpec
	// Retain is how many completed checkpoints are kept (default 1).
	Retain int
	// Timeout aborts a checkpoint not acknowledged in time (default 10 min).
	Timeout time.Duration
	// MaxConcurrent bounds the checkpoints in flight (default 1).
	MaxConcurrent int
	// TriggerTarget receives TriggerCheckpoint.
	TriggerTarget *actor.PID
	// Subscribers receive Complete and Aborted (more with Subscribe).
	Subscribers []*actor.PID
	// RecoveredTo receives Recovered.
	RecoveredTo *actor.PID
}

// Coordinator is the checkpoint coordinator actor. On start it recovers:
// it reads every checkpoint and savepoint metadata in the blob store into
// the ledger (checkpoints beyond Retain are subsumed) and deletes every blob
// nothing retained references (orphans of crashed checkpoints and failed
// deletions). Then, per checkpoint: Trigger → TriggerCheckpoint to the job →
// one Ack per subtask (registered in the ledger as it arrives) → metadata
// written atomically on the executor → Complete to every subscriber, or on
// a decline, a bad acknowledgement, a failed metadata write or the timeout
// (a clock message) → Aborted; after either, the blobs nothing references
// are deleted, metadata first.
type Coordinator struct {
	cfg     CoordinatorConfig
	sys     *actors.System
	ctx     actor.Context
	state   *coordinatorState
	subs    []*actor.PID
	waiting []triggerRequest // triggers before recovery
	busy    int              // executor jobs in flight
	quiesce []*actor.PID
	leaked  map[string]bool
	timers  map[CheckpointID]actors.Timer
}

type triggerRequest struct {
	kind    Kind
	replyTo *actor.PID
}

// NewCoordinator returns the producer of a Coordinator actor.
func NewCoordinator(sys *actors.System, cfg CoordinatorConfig) actor.Producer {
	return func() actor.Actor {
		return &Coordinator{cfg: cfg, sys: sys, subs: append([]*actor.PID(nil), cfg.Subscribers...),
			leaked: map[string]bool{}, timers: map[CheckpointID]actors.Timer{}}
	}
}

// Messages the Coordinator sends itself.
type (
	recoveryRead struct {
		listing []BlobInfo
		metas   map[string]*Metadata
		bad     []string
		err     error
	}
	checkpointTimeout struct{ id CheckpointID }
	metadataWritten   struct {
		id   CheckpointID
		name string
		err  error
	}
	blobsDeleted struct{ leaked []string }
)

func (m *recoveryRead) Trace() string {
	return fmt.Sprintf("blobs=%d metadata=%d bad=%d err=%v", len(m.listing), len(m.metas), len(m.bad), m.err)
}
func (m *checkpointTimeout) Trace() string { return fmt.Sprintf("id=%d", m.id) }
func (m *metadataWritten) Trace() string {
	return fmt.Sprintf("id=%d name=%s err=%v", m.id, m.name, m.err)
}
func (m *blobsDeleted) Trace() string { return fmt.Sprintf("leaked=%d", len(m.leaked)) }

func (c *Coordinator) Receive(ctx actor.Context) {
	c.ctx = ctx
	defer func() { c.ctx = nil }()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.busy++
		blobs := c.cfg.Blobs
		c.sys.Executor().Submit(ctx.Self(), func() any { return readRecovery(blobs) })
	case *recoveryRead:
		c.busy--
		c.recover(m)
	case *Trigger:
		c.handleTrigger(triggerRequest{kind: m.Kind, replyTo: ctx.Sender()})
	case *Ack:
		if c.state != nil {
			c.state.ack(m.ID, m.Operator, m.State)
		}
	case *Decline:
		if c.state != nil {
			c.state.decline(m.ID, m.Operator, m.Subtask, m.Err)
			c.state.discardLeaked(m.Leaked)
		} else {
			// No ledger (not recovered): a start's sweep removes them.
			for _, b := range m.Leaked {
				c.leaked[b] = true
			}
		}
	case *checkpointTimeout:
		c.state.timeout(m.id)
	case *metadataWritten:
		c.busy--
		c.state.written(m.id, m.name, m.err)
	case *blobsDeleted:
		c.busy--
		for _, b := range m.leaked {
			c.leaked[b] = true
		}
	case *Subscribe:
		c.subs = append(c.subs, m.PID)
	case *DisposeSavepoint:
		c.dispose(m.ID)
	case *Quiesce:
		if ctx.Sender() != nil {
			c.quiesce = append(c.quiesce, ctx.Sender())
		}
	}
	c.answerQuiesce()
}

func (c *Coordinator) handleTrigger(r triggerRequest) {
	if c.state == nil {
		c.waiting = append(c.waiting, r)
		return
	}
	id, err := c.state.begin(r.kind, c.sys.Clock().Now().UnixMilli())
	if r.replyTo != nil {
		c.ctx.Send(r.replyTo, &Triggered{ID: id, Kind: r.kind, Err: err})
	}
}

func (c *Coordinator) dispose(id CheckpointID) {
	var err error
	if c.state == nil {
		err = fmt.Errorf("dispose savepoint %d: the coordinator has not recovered", id)
	} else {
		var plan Plan
		plan, err = c.state.ledger.DisposeSavepoint(id)
		c.execute(plan)
	}
	if s := c.ctx.Sender(); s != nil {
		c.ctx.Send(s, &Disposed{ID: id, Err: err})
	}
}

func (c *Coordinator) answerQuiesce() {
	if c.busy > 0 || len(c.quiesce) == 0 || c.state == nil {
		return
	}
	l := c.state.ledger
	q := &Quiet{Retained: l.Retained(), Pending: l.Pending(), Savepoints: l.Savepoints(), LiveBlobs: l.LiveBlobs()}
	for b := range c.leaked {
		q.Leaked = append(q.Leaked, b)
	}
	for _, to := range c.quiesce {
		c.ctx.Send(to, q)
	}
	c.quiesce = nil
}

// recover rebuilds the ledger from what the blob store holds, sweeps the
// orphans and starts serving triggers.
func (c *Coordinator) recover(r *recoveryRead) {
	ledger, err := NewLedger(max(c.cfg.Retain, 1))
	rec := &Recovered{Err: r.err}
	if err != nil {
		rec.Err = err
	}
	if rec.Err == nil {
		var plan Plan
		plan, rec.Unreadable = restoreLedger(ledger, r.metas, r.bad)
		c.state, rec.Err = newCoordinatorState(c, ledger, c.cfg.JobID, c.cfg.Operators, c.cfg.MaxConcurrent)
		if rec.Err == nil {
			orphans := sweepOrphans(r.listing, ledger, rec.Unreadable)
			rec.Swept = len(orphans)
			plan.Delete = append(plan.Delete, orphans...)
			plan.finish()
			c.execute(plan)
			rec.Retained, rec.Savepoints = ledger.Retained(), ledger.Savepoints()
			if id, blob, ok := ledger.Latest(); ok {
				rec.Latest, rec.LatestBlob = r.metas[blob], blob
				c.state.nextID = max(c.state.nextID, id+1)
			}
			for _, m := range r.metas {
				c.state.nextID = max(c.state.nextID, m.ID+1)
			}
		}
	}
	if c.cfg.RecoveredTo != nil {
		c.ctx.Send(c.cfg.RecoveredTo, rec)
	}
	if rec.Err != nil {
		c.state = nil
		for _, w := range c.waiting {
			if w.replyTo != nil {
				c.ctx.Send(w.replyTo, &Triggered{Kind: w.kind, Err: fmt.Errorf("coordinator recovery: %w", rec.Err)})
			}
		}
		c.waiting = nil
		return
	}
	waiting := c.waiting
	c.waiting = nil
	for _, w := range waiting {
		c.handleTrigger(w)
	}
}

// readRecovery lists the blob store and reads every metadata blob. It runs
// on the executor.
func readRecovery(store BlobStore) *recoveryRead {
	ctx := context.Background()
	listing, err := store.List(ctx, "")
	if err != nil {
		return &recoveryRead{err: fmt.Errorf("list checkpoint storage: %w", err)}
	}
	r := &recoveryRead{listing: listing, metas: map[string]*Metadata{}}
	for _, b := range listing {
		if _, _, ok := ParseMetadataBlobName(b.Name); !ok {
			continue
		}
		m, err := ReadMetadata(ctx, store, b.Name)
		switch {
		case err == nil:
			r.metas[b.Name] = m
		case IsTransient(err):
			return &recoveryRead{err: fmt.Errorf("read %s: %w", b.Name, err)}
		default:
			r.bad = append(r.bad, b.Name)
		}
	}
	return r
}

// Coordinator implements coordinatorIO.

func (c *Coordinator) trigger(id CheckpointID, kind Kind, ts int64) {
	timeout := c.cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	c.timers[id] = c.sys.Clock().SendAfter(timeout, c.ctx.Self(), &checkpointTimeout{id: id})
	if c.cfg.TriggerTarget != nil {
		c.ctx.Send(c.cfg.TriggerTarget, &TriggerCheckpoint{ID: id, Kind: kind, TimestampMillis: ts})
	}
}

func (c *Coordinator) write(m *Metadata) {
	c.busy++
	store, self := c.cfg.Blobs, c.ctx.Self()
	c.sys.Executor().Submit(self, func() any {
		name, err := WriteMetadata(context.Background(), store, m)
		if name == "" {
			name = MetadataBlobName(m.Kind, m.ID)
		}
		return &metadataWritten{id: m.ID, name: name, err: err}
	})
}

func (c *Coordinator) stopTimer(id CheckpointID) {
	if t, ok := c.timers[id]; ok {
		t.Stop()
		delete(c.timers, id)
	}
}

func (c *Coordinator) notifyComplete(id CheckpointID, kind Kind, blob string) {
	c.stopTimer(id)
	for _, s := range c.subs {
		c.ctx.Send(s, &Complete{ID: id, Kind: kind, Metadata: blob})
	}
}

func (c *Coordinator) notifyAborted(id CheckpointID, err error) {
	c.stopTimer(id)
	for _, s := range c.subs {
		c.ctx.Send(s, &Aborted{ID: id, Err: err})
	}
}

func (c *Coordinator) execute(plan Plan) {
	if len(plan.Delete) == 0 {
		return
	}
	var meta, files []string
	for _, b := range plan.Delete {
		if isMetadataBlob(b) {
			meta = append(meta, b)
		} else {
			files = append(files, b)
		}
	}
	c.busy++
	store := c.cfg.Blobs
	c.sys.Executor().Submit(c.ctx.Self(), func() any {
		if leaked := deleteBlobs(store, meta, 3); len(leaked) > 0 {
			return &blobsDeleted{leaked: append(leaked, files...)}
		}
		return &blobsDeleted{leaked: deleteBlobs(store, files, 3)}
	})
}
