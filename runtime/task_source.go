package runtime

import (
	"fmt"
	"math"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/barrier"
)

// sourceTask is the actor of one source subtask. It reads its splits in
// turns, one batch per produceMsg it sends itself, so that triggers and
// credits interleave with reading; it reads only while its output has no
// backlog. Splits with nothing to read are polled on a clock timer.
type sourceTask struct {
	taskCore
	splits  []*splitState
	uses    []OutputUse
	cursor  int
	started bool
	// scheduled: a produceMsg is in the mailbox; token identifies the
	// current poll timer's message.
	scheduled bool
	token     uint64
	stalled   bool // waiting for credits
	held      bool // held by the job: some store's maintenance is behind
	idle      bool // reported idle to the job
	ended     bool
	wm        int64
}

type splitState struct {
	split  int
	reader SplitReader
	done   bool
	idle   bool
}

func (t *sourceTask) Receive(ctx actor.Context) {
	if t.failed {
		return
	}
	var err error
	switch m := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case *wireMsg:
		err = t.setup(ctx.Self(), m)
	case *startMsg:
		t.started = true
		t.schedule()
	case *produceMsg:
		if m.token == t.token {
			t.scheduled = false
			err = t.produce()
		}
	case *creditMsg:
		t.out.credit(int(m.ch), int(m.n), m.spent)
		if t.stalled && t.out.backlog == 0 {
			t.stalled = false
			t.schedule()
		}
	case *holdSources:
		t.held = m.hold
		if !t.held {
			t.schedule()
		}
	case *injectBarrier:
		err = t.checkpoint(m.id)
	case *barrier.SyncDone:
		t.synced(m)
	case *barrier.Complete, *barrier.Aborted:
	default:
		err = fmt.Errorf("unexpected message %T", m)
	}
	if err != nil {
		t.fail(err)
	}
}

func (t *sourceTask) setup(self *actor.PID, m *wireMsg) error {
	t.wire(self, m)
	t.wm = math.MinInt64
	n := t.tp.node
	t.uses = make([]OutputUse, len(n.outs))
	for i, es := range n.outs {
		t.uses[i] = outputUse(es)
		if cols := t.uses[i].Columns; cols != nil {
			// The reader makes the projection the edges start with.
			for _, ei := range t.out.byOutput[i] {
				e := &t.out.edges[ei]
				if len(e.chain) == 0 || !slices.Equal(e.chain[0].project, cols) {
					panic(fmt.Sprintf("runtime: output %d: an edge does not start with the projection %v its reader makes", i, cols))
				}
				e.chain = e.chain[1:]
			}
		}
	}
	offsets := map[int]int64{}
	if r := t.start().restore; r != nil {
		var err error
		if offsets, err = mergeOffsets(r.extras, n.source.Splits()); err != nil {
			return fmt.Errorf("restore of checkpoint %d: %w", r.id, err)
		}
	}
	p := t.env.plan.parallelism
	for s := t.tp.id.Subtask; s < n.source.Splits(); s += p {
		rd, err := n.source.Open(s, offsets[s], t.uses)
		if err != nil {
			return fmt.Errorf("open split %d: %w", s, err)
		}
		t.splits = append(t.splits, &splitState{split: s, reader: rd})
	}
	return nil
}

// outputUse is how the edges es use the rows of the output they consume.
// A projection that every edge starts with is left to the reader; each edge
// whose steps (after that projection) project before anything could keep
// the row copies out the columns it keeps.
func outputUse(es []*edge) OutputUse {
	if len(es) == 0 {
		return OutputUse{Rows: Unread}
	}
	use := OutputUse{Rows: Borrowed, Columns: leadingProjection(es)}
	skip := 0
	if use.Columns != nil {
		skip = 1
	}
	for _, e := range es {
		if !projectsFirst(e.chain[skip:]) {
			use.Rows = Kept
		}
	}
	return use
}

// leadingProjection is the projection that every edge of es starts with, or
// nil if they do not all start with the same one.
func leadingProjection(es []*edge) []int {
	var cols []int
	for i, e := range es {
		if len(e.chain) == 0 || e.chain[0].project == nil {
			return nil
		}
		if i > 0 && !slices.Equal(e.chain[0].project, cols) {
			return nil
		}
		cols = e.chain[0].project
	}
	return slices.Clone(cols)
}

// schedule makes sure a produceMsg is on its way.
func (t *sourceTask) schedule() {
	if t.scheduled || t.ended || !t.started {
		return
	}
	t.scheduled = true
	t.token++
	t.send(t.self, &produceMsg{token: t.token})
}

func (t *sourceTask) produce() error {
	if t.ended {
		return nil
	}
	if t.held {
		return nil
	}
	if t.out.backlog > 0 {
		t.stalled = true
		return nil
	}
	s := t.nextSplit()
	if s == nil {
		return t.allIdleOrDone()
	}
	emit := func(output int, row Row) { t.out.emit(output, Insert, row) }
	status, err := s.reader.Read(t.env.opts.BatchSize, emit)
	if err != nil {
		return fmt.Errorf("split %d: %w", s.split, err)
	}
	switch status {
	case ReadDone:
		s.done = true
	case ReadIdle:
		s.idle = true
	case ReadMore:
		t.setIdle(false)
	}
	t.out.flush()
	t.advanceWatermark()
	t.schedule()
	return nil
}

// nextSplit picks the next split to read, in turns over those neither done
// nor idle.
func (t *sourceTask) nextSplit() *splitState {
	for k := range t.splits {
		i := (t.cursor + k) % len(t.splits)
		if s := t.splits[i]; !s.done && !s.idle {
			t.cursor = i + 1
			return s
		}
	}
	return nil
}

// allIdleOrDone runs when no split can be read: the source ends once every
// split is done, and otherwise polls its idle splits after a while.
func (t *sourceTask) allIdleOrDone() error {
	t.setIdle(true)
	for _, s := range t.splits {
		if !s.done {
			for _, s := range t.splits {
				s.idle = false
			}
			t.scheduled = true
			t.token++
			t.env.sys.Clock().SendAfter(t.env.opts.IdlePoll, t.self, &produceMsg{token: t.token})
			return nil
		}
	}
	t.ended = true
	t.advanceWatermark()
	t.out.broadcast(func(ch int32) any { return &endMsg{ch: ch} })
	return nil
}

func (t *sourceTask) setIdle(idle bool) {
	if idle != t.idle {
		t.idle = idle
		t.send(t.env.job, &sourceIdle{task: t.tp.global, idle: idle})
	}
}

// advanceWatermark forwards the minimum watermark of the splits not yet done.
func (t *sourceTask) advanceWatermark() {
	wm := int64(math.MaxInt64)
	for _, s := range t.splits {
		if !s.done {
			wm = min(wm, s.reader.Watermark())
		}
	}
	if wm > t.wm {
		t.wm = wm
		t.out.broadcast(func(ch int32) any { return &watermarkMsg{ch: ch, wm: wm} })
	}
}

// checkpoint records the offsets of the task's splits and injects the
// barrier behind everything read so far.
func (t *sourceTask) checkpoint(id int64) error {
	offsets := make(map[int]int64, len(t.splits))
	for _, s := range t.splits {
		offsets[s.split] = s.reader.Offset()
	}
	t.out.broadcast(func(ch int32) any { return &barrierMsg{ch: ch, id: id} })
	t.syncStarted(id)
	t.ck.SyncPhase(&SyncRequest{ID: id, Task: t.tp.id, KeyGroups: t.tp.keyGroups, Extras: [][]byte{encodeOffsets(offsets)}, ReplyTo: t.self})
	return nil
}
