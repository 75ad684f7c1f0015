package sim

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
)

// Extras keys of the workload's subtasks.
const (
	extraSource = "source"
	extraSink   = "sink"
)

// sourceActor emits the stream from a replayable offset and injects
// checkpoint barriers, its offset going into the checkpoint.
type sourceActor struct {
	env     *env
	run     int
	sys     *actors.System
	s       *stream
	off     int64
	keyed   []*actor.PID
	maxP    int
	storeAc *actor.PID
	rng     *rand.Rand
	pace    int // max delay between batches, ms
}

func (a *sourceActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.rng = a.sys.Rand(ctx.Self().Id)
		ctx.Send(ctx.Self(), &sourceTick{})
	case *sourceTick:
		if a.off >= int64(len(a.s.events)) {
			return
		}
		n := min(int64(1+a.rng.IntN(6)), int64(len(a.s.events))-a.off)
		per := make([][]event, len(a.keyed))
		for _, e := range a.s.events[a.off : a.off+n] {
			i := keygroup.SubtaskForKeyGroup(a.maxP, len(a.keyed), keyGroupOf(e.Key, a.maxP))
			per[i] = append(per[i], e)
		}
		for i, b := range per {
			if len(b) > 0 {
				ctx.Send(a.keyed[i], &events{batch: b})
			}
		}
		a.off += n
		a.sys.Clock().SendAfter(time.Duration(a.rng.IntN(a.pace+1))*time.Millisecond, ctx.Self(), &sourceTick{})
	case *barrier.TriggerCheckpoint:
		a.env.check.barrierSent(a.run, opSource, 0, m.ID)
		ctx.Send(a.storeAc, &barrier.Barrier{ID: m.ID, Kind: m.Kind, Extras: map[string]barrier.Extra{extraSource: {encodeOffset(a.off)}}, ReplyTo: ctx.Self()})
		for _, k := range a.keyed {
			ctx.Send(k, &streamBarrier{id: m.ID, kind: m.Kind})
		}
	}
}

func encodeOffset(off int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(off)) }

func decodeOffset(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("source offset of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// keyedActor is one keyed operator subtask: it applies events to its store
// and, at a barrier, lends the store to its Store actor and waits for the
// sync phase to end.
type keyedActor struct {
	env     *env
	run     int
	idx     int
	op      *operator
	storeAc *actor.PID
	sink    *actor.PID
	syncing barrier.CheckpointID
	queue   []any
	failed  bool // the subtask failed and processes nothing until the job fails over
}

func (a *keyedActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *events, *streamBarrier:
		if a.failed {
			return
		}
		if a.syncing != 0 {
			a.queue = append(a.queue, m)
			return
		}
		a.handle(ctx, m)
	case *barrier.SyncDone:
		if m.ID != a.syncing {
			a.env.check.fail(fmt.Errorf("keyed subtask %d: SyncDone(%d) during the sync phase of %d", a.idx, m.ID, a.syncing))
			return
		}
		a.env.check.syncDone(a.run, opKeyed, a.idx, m.ID)
		a.syncing = 0
		for len(a.queue) > 0 && a.syncing == 0 {
			next := a.queue[0]
			a.queue = a.queue[1:]
			a.handle(ctx, next)
		}
	}
}

func (a *keyedActor) handle(ctx actor.Context, m any) {
	switch m := m.(type) {
	case *events:
		recs, err := a.op.process(m.batch)
		if err != nil {
			a.failed = true
			a.env.operatorFailed(a.run, fmt.Errorf("keyed subtask %d, offset %d: %w", a.idx, m.batch[0].Off, err))
			return
		}
		ctx.Send(a.sink, &outputs{recs: recs})
	case *streamBarrier:
		ctx.Send(a.sink, m)
		a.env.check.barrierSent(a.run, opKeyed, a.idx, m.id)
		a.syncing = m.id
		ctx.Send(a.storeAc, &barrier.Barrier{ID: m.id, Kind: m.kind, Store: a.op.store, ReplyTo: ctx.Self()})
	}
}

// sinkActor is one exactly-once sink subtask: output between two barriers
// is one transaction, kept in the checkpoint's extras until a completed
// checkpoint that contains it lets the sink commit it.
type sinkActor struct {
	env      *env
	run      int
	idx      int
	storeAc  *actor.PID
	cur      []record
	pending  []txn
	restored []txn
	progress *actor.PID
}

func (a *sinkActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		// The restored checkpoint completed: its transactions commit now
		// (again, if a run before this one committed them already).
		for _, t := range a.restored {
			a.env.ext.commit(t)
		}
		a.restored = nil
		a.notify(ctx)
	case *outputs:
		a.cur = append(a.cur, m.recs...)
	case *streamBarrier:
		if len(a.cur) > 0 {
			a.pending = append(a.pending, txn{ID: txnID{Writer: a.idx, Checkpoint: uint64(m.id)}, Recs: a.cur})
			a.cur = nil
		}
		a.env.check.barrierSent(a.run, opSink, a.idx, m.id)
		ctx.Send(a.storeAc, &barrier.Barrier{ID: m.id, Kind: m.kind, Extras: map[string]barrier.Extra{extraSink: {encodeTxns(a.pending)}}, ReplyTo: ctx.Self()})
	case *barrier.Complete:
		if m.Kind != barrier.KindCheckpoint {
			return
		}
		keep := a.pending[:0]
		for _, t := range a.pending {
			if t.ID.Checkpoint <= uint64(m.ID) {
				a.env.ext.commit(t)
			} else {
				keep = append(keep, t)
			}
		}
		a.pending = keep
		a.notify(ctx)
	}
}

func (a *sinkActor) notify(ctx actor.Context) {
	if a.progress != nil {
		ctx.Send(a.progress, &progress{})
	}
}

// jobActor triggers checkpoints at random intervals and receives the
// coordinator's TriggerCheckpoint for the source.
type jobActor struct {
	sys     *actors.System
	coord   *actor.PID
	source  *actor.PID
	rng     *rand.Rand
	every   int // max interval between triggers, ms
	on      bool
	pending map[barrier.CheckpointID]bool
	idleTo  *actor.PID
	lastID  *barrier.CheckpointID // shared with the simulation's driver (decline faults)
}

func (a *jobActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.rng = a.sys.Rand(ctx.Self().Id)
		a.pending = map[barrier.CheckpointID]bool{}
	case *startTriggers:
		a.source = m.source.(*actor.PID)
		a.on = true
		a.sys.Clock().SendAfter(time.Duration(1+a.rng.IntN(a.every))*time.Millisecond, ctx.Self(), &triggerTick{})
	case *triggerTick:
		if !a.on {
			return
		}
		// Now and then a savepoint: it uploads everything, shares nothing,
		// and its completion must not move any store's reuse base.
		kind := barrier.KindCheckpoint
		if a.rng.IntN(8) == 0 {
			kind = barrier.KindSavepoint
		}
		ctx.Request(a.coord, &barrier.Trigger{Kind: kind})
		a.sys.Clock().SendAfter(time.Duration(1+a.rng.IntN(a.every))*time.Millisecond, ctx.Self(), &triggerTick{})
	case *barrier.Triggered:
		if m.Err == nil {
			a.pending[m.ID] = true
			*a.lastID = m.ID
		}
	case *barrier.TriggerCheckpoint:
		ctx.Send(a.source, m)
	case *barrier.Complete:
		delete(a.pending, m.ID)
		a.maybeIdle(ctx)
	case *barrier.Aborted:
		delete(a.pending, m.ID)
		a.maybeIdle(ctx)
	case *stopTriggers:
		a.on = false
		a.idleTo = ctx.Sender()
		a.maybeIdle(ctx)
	}
}

func (a *jobActor) maybeIdle(ctx actor.Context) {
	if !a.on && a.idleTo != nil && len(a.pending) == 0 {
		ctx.Send(a.idleTo, &jobIdle{})
		a.idleTo = nil
	}
}

// notifyRelay stands between the coordinator and one subscriber: it loses
// or delays Complete and Aborted notifications as the live faults say, and
// tells the checker what it delivers.
type notifyRelay struct {
	env    *env
	run    int
	op     string
	idx    int
	target *actor.PID
	rng    *rand.Rand
}

func (a *notifyRelay) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.rng = a.env.sys.Rand(ctx.Self().Id)
	case *barrier.Complete, *barrier.Aborted:
		f := a.env.live
		if f.notifyLost > 0 && a.rng.Float64() < f.notifyLost {
			a.env.count(FaultNotifyLost)
			return
		}
		if f.notifyLate > 0 && a.rng.Float64() < f.notifyLate {
			a.env.count(FaultNotifyLate)
			a.env.sys.Clock().SendAfter(time.Duration(1+a.rng.IntN(40))*time.Millisecond, ctx.Self(), &delayed{msg: m})
			return
		}
		a.deliver(ctx, m)
	case *delayed:
		a.deliver(ctx, m.msg)
	}
}

func (a *notifyRelay) deliver(ctx actor.Context, m any) {
	if c, ok := m.(*barrier.Complete); ok {
		a.env.check.completeDelivered(a.run, a.op, a.idx, c)
	}
	ctx.Send(a.target, m)
}

// storeTap stands between one Store actor and the coordinator and uploader:
// it forwards everything and checks the phase order of what passes.
type storeTap struct {
	env      *env
	rng      *rand.Rand
	run      int
	op       string
	idx      int
	coord    *actor.PID
	uploader *actor.PID
	store    *actor.PID
}

func (a *storeTap) Receive(ctx actor.Context) {
	c := a.env.check
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.rng = a.env.sys.Rand(ctx.Self().Id)
	case *barrier.Upload:
		a.store = m.ReplyTo
		c.upload(a.run, a.op, a.idx, m)
		ctx.Send(a.uploader, &barrier.Upload{ID: m.ID, Files: m.Files, ReplyTo: ctx.Self()})
	case *barrier.CancelUpload:
		ctx.Send(a.uploader, &barrier.CancelUpload{ID: m.ID, ReplyTo: ctx.Self()})
	case *barrier.UploadDone:
		c.uploadDone(a.run, a.op, a.idx, m)
		ctx.Send(a.store, m)
	case *barrier.Ack:
		c.ack(a.run, a.op, a.idx, m)
		ctx.Send(a.coord, m)
		a.maybeDecline(ctx, m.ID)
	case *barrier.Decline:
		if m.Err != nil && strings.Contains(m.Err.Error(), invariantText) {
			c.fail(fmt.Errorf("compaction invariant: %s/%d declined checkpoint %d: %w", a.op, a.idx, m.ID, m.Err))
		}
		ctx.Send(a.coord, m)
	case *barrier.Drain:
		// Everything the tap took before is forwarded already.
		ctx.Respond(&barrier.Drained{})
	}
}

// ticker keeps a few short timers pending at all times, so that a timer
// jump of the simulation (SimOptions.TimerJumpChance) advances virtual time
// by at most its period: once the faults heal, a checkpoint timeout can no
// longer be reached by jumps alone.
type ticker struct {
	sys    *actors.System
	period time.Duration
}

type tick struct{}

func (a *ticker) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		for i := range 3 {
			a.sys.Clock().SendAfter(a.period*time.Duration(i+1), ctx.Self(), &tick{})
		}
	case *tick:
		a.sys.Clock().SendAfter(3*a.period, ctx.Self(), &tick{})
	}
}

// maybeDecline injects, right behind a keyed subtask's acknowledgement, a
// decline of the same checkpoint by a subtask that has not acknowledged it:
// the abort then releases a checkpoint that already registered reused
// files, the case an abort is most likely to get wrong.
func (a *storeTap) maybeDecline(ctx actor.Context, id barrier.CheckpointID) {
	if a.op != opKeyed || a.env.pDecline == 0 || a.rng.Float64() >= 2*a.env.pDecline {
		return
	}
	if op, i, ok := a.env.check.declineTarget(a.run, id); ok {
		a.env.count(FaultDecline)
		ctx.Send(a.coord, &barrier.Decline{ID: id, Operator: op, Subtask: i, Err: errInjectedDecline})
	}
}
