package runtime

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/subtask"
)

// operatorTask is the actor of one subtask of an operator or a sink: it
// feeds input batches to the operator, aligns barriers, runs the sync phase
// through its checkpointer and passes watermarks and the end of input on.
type operatorTask struct {
	taskCore
	op    Operator
	octx  OperatorContext
	store *subtask.Store
	in    *inputs
	emit  taskEmitter
}

// taskEmitter routes an operator's records to its single output.
type taskEmitter struct{ out *outputs }

func (e taskEmitter) Emit(kind Change, row Row) { e.out.emit(0, kind, row) }

func (t *operatorTask) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Stopped); ok {
		// A failed task closes its store too: it ignores everything else,
		// but its store's files, memory and databases stay open until
		// closed.
		if err := t.closeStore(); err != nil {
			t.fail(err)
		}
		return
	}
	if t.failed {
		return
	}
	var err error
	switch m := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Restarting:
	case *wireMsg:
		err = t.setup(ctx.Self(), m)
	case *dataMsg:
		err = t.offer(int(m.ch), m)
	case *barrierMsg:
		err = t.offer(int(m.ch), m)
	case *watermarkMsg:
		err = t.offer(int(m.ch), m)
	case *endMsg:
		err = t.offer(int(m.ch), m)
	case *creditMsg:
		t.out.credit(int(m.ch), int(m.n), m.spent)
		err = t.pump()
	case *barrier.SyncDone:
		if int64(m.ID) == t.syncID && t.in.paused {
			t.synced(m)
			t.in.paused = false
			err = t.pump()
		}
	case *barrier.Complete:
		if l, ok := t.op.(CheckpointListener); ok && m.Kind == barrier.KindCheckpoint {
			err = l.CheckpointComplete(int64(m.ID))
		}
	case *barrier.Aborted:
		if l, ok := t.op.(CheckpointListener); ok {
			err = l.CheckpointAborted(int64(m.ID))
		}
	default:
		h, ok := t.op.(MessageHandler)
		if !ok {
			err = fmt.Errorf("unexpected message %T", m)
			break
		}
		if err = h.Receive(m); err == nil {
			err = t.pump()
		}
	}
	if err != nil {
		t.fail(err)
	}
}

// closeStore closes the task's store when it stops, wired or not. The
// Store actor may still have a job on the store (a flush or freeze the stop
// cut short, a paimon commit after SyncDone): the fence closes the store
// once the running ones end and refuses the rest.
func (t *operatorTask) closeStore() error {
	st := t.start()
	return st.fence.Close(st.close)
}

func (t *operatorTask) setup(self *actor.PID, m *wireMsg) error {
	t.wire(self, m)
	t.emit = taskEmitter{out: t.out}
	t.in = newInputs(t.tp)
	n := t.tp.node
	t.octx = OperatorContext{
		Task:           t.tp.id,
		Parallelism:    t.env.plan.parallelism,
		MaxParallelism: t.env.plan.maxParallelism,
		KeyGroups:      t.tp.keyGroups,
		submit:         t.env.opJobs.submit(self),
		committed:      func(id int64) { t.send(t.env.job, &sinkCommitted{task: t.tp.global, id: id}) },
	}
	for _, e := range n.inputs {
		t.octx.Inputs = append(t.octx.Inputs, e.from.schemas[e.output])
	}
	st := t.start()
	if r := st.restore; r != nil {
		t.octx.Restored, t.octx.RestoredID = r.extras, r.id
	}
	if st.backend != nil {
		t.store = subtask.NewStore(st.backend)
		t.store.SetNow(t.env.sys.Clock().Now().UnixMilli())
	}
	t.octx.Store = t.store
	t.op = n.newOp()
	if err := t.op.Open(&t.octx); err != nil {
		return fmt.Errorf("open: %w", err)
	}
	if st.restored != nil {
		if err := st.restored.Finish(t.store, t.env.fio); err != nil {
			return fmt.Errorf("restore of checkpoint %d: %w", st.restore.id, err)
		}
	}
	return nil
}

// offer handles a message from an input channel, or queues it.
func (t *operatorTask) offer(ch int, msg any) error {
	if t.in.admit(ch, msg) {
		if err := t.handle(ch, msg); err != nil {
			return err
		}
	}
	return t.pump()
}

// pump handles queued messages while it can, sends the batches the operator
// emitted and returns the credits the task owes.
func (t *operatorTask) pump() error {
	for {
		ch, msg, ok := t.in.next()
		if !ok {
			break
		}
		if err := t.handle(ch, msg); err != nil {
			return err
		}
	}
	t.out.flush()
	t.returnCredits()
	return nil
}

// returnCredits credits senders back for the batches handled, unless the
// task's own output is backlogged: then its senders wait, which is how
// backpressure reaches the sources.
func (t *operatorTask) returnCredits() {
	if t.out.backlog > len(t.out.chans) {
		return
	}
	for i := range t.in.chans {
		c := &t.in.chans[i]
		if c.owed == 0 {
			continue
		}
		from := t.tp.ins[i]
		t.send(t.pids[from.fromTask], &creditMsg{ch: int32(from.fromOut), n: c.owed, spent: c.spent})
		c.owed, c.spent = 0, nil
	}
}

func (t *operatorTask) handle(ch int, msg any) error {
	switch m := msg.(type) {
	case *dataMsg:
		t.in.chans[ch].owed++
		if t.store != nil {
			t.store.SetNow(t.env.sys.Clock().Now().UnixMilli())
		}
		c := &t.in.chans[ch]
		err := t.op.Process(c.input, m.recs, t.emit)
		if t.store != nil {
			t.store.EndBatch()
		}
		// An operator is done with its records when Process returns, so
		// the batch goes back to its sender for the next one; emptied, it
		// keeps no row alive.
		clear(m.recs)
		c.spent = append(c.spent, m.recs[:0])
		return err
	case *barrierMsg:
		aligned, err := t.in.barrier(ch, m.id)
		if err != nil || !aligned {
			return err
		}
		return t.checkpoint(m.id)
	case *watermarkMsg:
		if wm, ok := t.in.watermark(ch, m.wm); ok {
			return t.watermark(wm)
		}
	case *endMsg:
		all, wm, ok := t.in.end(ch)
		if ok {
			if err := t.watermark(wm); err != nil {
				return err
			}
		}
		if all {
			return t.endOfInput()
		}
	}
	return nil
}

// checkpoint runs the task's part of checkpoint id once barrier id is
// aligned: it forwards the barrier, then pauses for the sync phase.
func (t *operatorTask) checkpoint(id int64) error {
	t.out.broadcast(func(ch int32) any { return &barrierMsg{ch: ch, id: id} })
	var extras [][]byte
	var pieces []barrier.ExtraPiece
	var err error
	switch s := t.op.(type) {
	case pieceSnapshotter:
		extras, pieces, err = s.snapshotPieces(id)
	case Snapshotter:
		extras, err = s.Snapshot(id)
	}
	if err != nil {
		return fmt.Errorf("snapshot of checkpoint %d: %w", id, err)
	}
	t.in.paused = true
	t.syncStarted(id)
	t.ck.SyncPhase(&SyncRequest{ID: id, Task: t.tp.id, KeyGroups: t.tp.keyGroups, Store: t.store, Extras: extras, Pieces: pieces, ReplyTo: t.self})
	return nil
}

func (t *operatorTask) watermark(wm int64) error {
	if h, ok := t.op.(WatermarkHandler); ok {
		if err := h.Watermark(wm, t.emit); err != nil {
			return err
		}
	}
	t.out.broadcast(func(ch int32) any { return &watermarkMsg{ch: ch, wm: wm} })
	return nil
}

func (t *operatorTask) endOfInput() error {
	if h, ok := t.op.(EndHandler); ok {
		if err := h.EndOfInput(t.emit); err != nil {
			return err
		}
	}
	t.out.broadcast(func(ch int32) any { return &endMsg{ch: ch} })
	if t.tp.node.kind == kindSink {
		t.send(t.env.job, &inputEnded{task: t.tp.global})
	}
	return nil
}
