package runtime

import (
	"fmt"
	"math"
)

// inputs is the receiving side of a task: per input channel, the messages
// that cannot be handled yet, barrier alignment, the channel watermarks and
// the credits owed to senders.
//
// A message is handled on arrival unless its channel is blocked by
// alignment, the task is paused in a sync phase, or earlier messages of the
// channel still wait; then it queues behind them. Channels are served round
// robin, so one busy channel does not starve the others.
type inputs struct {
	chans []recvChan
	// aligning is the barrier being aligned (0: none); arrived counts the
	// channels that delivered it.
	aligning int64
	arrived  int
	// paused holds every channel during a sync phase.
	paused bool
	queued int
	cursor int
	wm     int64
	open   int
}

type recvChan struct {
	input   int
	queue   []any
	blocked bool
	ended   bool
	wm      int64
	owed    int32 // data batches handled and not yet credited back
	// spent is the batches handled since the last credit, emptied, to go
	// back to the sender with the credits.
	spent [][]Record
}

func newInputs(t *taskPlan) *inputs {
	in := &inputs{chans: make([]recvChan, len(t.ins)), wm: math.MinInt64, open: len(t.ins)}
	for i, c := range t.ins {
		in.chans[i] = recvChan{input: c.input, wm: math.MinInt64}
	}
	return in
}

// admit reports whether msg from channel ch can be handled now; if not it
// queues it.
func (in *inputs) admit(ch int, msg any) bool {
	c := &in.chans[ch]
	if !in.paused && !c.blocked && len(c.queue) == 0 {
		return true
	}
	c.queue = append(c.queue, msg)
	in.queued++
	return false
}

// next takes the next queued message that can be handled now.
func (in *inputs) next() (int, any, bool) {
	if in.paused || in.queued == 0 {
		return 0, nil, false
	}
	n := len(in.chans)
	for k := range n {
		ch := (in.cursor + k) % n
		c := &in.chans[ch]
		if c.blocked || len(c.queue) == 0 {
			continue
		}
		msg := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		in.queued--
		in.cursor = (ch + 1) % n
		return ch, msg, true
	}
	return 0, nil, false
}

// barrier records barrier id on channel ch and reports whether every
// channel has now delivered it. Until then ch is blocked.
func (in *inputs) barrier(ch int, id int64) (bool, error) {
	c := &in.chans[ch]
	if c.blocked {
		return false, fmt.Errorf("channel %d: barrier %d while blocked at barrier %d", ch, id, in.aligning)
	}
	if in.aligning == 0 {
		in.aligning = id
	} else if id != in.aligning {
		return false, fmt.Errorf("channel %d: barrier %d while aligning barrier %d", ch, id, in.aligning)
	}
	c.blocked = true
	in.arrived++
	if in.arrived < len(in.chans) {
		return false, nil
	}
	in.aligning, in.arrived = 0, 0
	for i := range in.chans {
		in.chans[i].blocked = false
	}
	return true, nil
}

// watermark records a channel's watermark and returns the task's watermark,
// the minimum over channels that have not ended, if it advanced.
func (in *inputs) watermark(ch int, wm int64) (int64, bool) {
	c := &in.chans[ch]
	c.wm = max(c.wm, wm)
	return in.advance()
}

// end records the end of channel ch; it reports whether every channel has
// ended, and the watermark if the end advanced it.
func (in *inputs) end(ch int) (all bool, wm int64, advanced bool) {
	c := &in.chans[ch]
	if c.ended {
		panic(fmt.Sprintf("runtime: channel %d ended twice", ch))
	}
	c.ended = true
	c.wm = math.MaxInt64
	in.open--
	wm, advanced = in.advance()
	return in.open == 0, wm, advanced
}

func (in *inputs) advance() (int64, bool) {
	low := int64(math.MaxInt64)
	for i := range in.chans {
		low = min(low, in.chans[i].wm)
	}
	if low <= in.wm {
		return in.wm, false
	}
	in.wm = low
	return low, true
}
