package actors

import (
	"container/heap"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// virtualClock is the simulation's clock. Virtual time moves only when the driver advances it to
// the next timer: when nothing else is runnable, on a timer jump, or at the end of RunFor.
type virtualClock struct {
	sim    *Sim
	start  time.Time
	now    time.Duration // since start
	timers timerHeap
	seq    uint64 // orders timers with equal deadlines by creation
}

var _ Clock = (*virtualClock)(nil)

func (c *virtualClock) Now() time.Time {
	if c.sim.guard.enter() != nil {
		return c.start // reading now from a foreign goroutine would race the driver
	}
	defer c.sim.guard.exit()
	return c.start.Add(c.now)
}

func (c *virtualClock) SendAfter(d time.Duration, to *actor.PID, msg any) Timer {
	t := &simTimer{sim: c.sim, to: to, msg: msg}
	if c.sim.guard.enter() != nil {
		t.done = true
		return t
	}
	defer c.sim.guard.exit()
	c.seq++
	t.at, t.seq = c.now+max(d, 0), c.seq
	t.owner, t.target = c.sim.current, c.sim.mailboxes[to.Id]
	heap.Push(&c.timers, t)
	return t
}

// releaseDue makes every timer due at the current virtual time runnable.
func (c *virtualClock) releaseDue() {
	for len(c.timers) > 0 && c.timers[0].at <= c.now {
		t := heap.Pop(&c.timers).(*simTimer)
		if !t.done {
			c.sim.enqueue(t.deliver)
		}
	}
}

// advance moves virtual time to the next pending timer, unless that is beyond horizon, and
// releases the timers then due. It reports whether time moved.
func (c *virtualClock) advance(horizon time.Duration) bool {
	for len(c.timers) > 0 && c.timers[0].done {
		heap.Pop(&c.timers)
	}
	if len(c.timers) == 0 {
		return false
	}
	next := c.timers[0].at
	if horizon != noHorizon && next > horizon {
		return false
	}
	c.now = next
	c.releaseDue()
	return true
}

// simTimer is one SendAfter. done means delivered, stopped or dropped by a crash.
type simTimer struct {
	sim    *Sim
	at     time.Duration
	seq    uint64
	to     *actor.PID
	msg    any
	owner  *stepMailbox // the actor that set the timer, if any
	target *stepMailbox // the simulated actor it is for, if it is one
	done   bool
}

func (t *simTimer) Stop() bool {
	if t.sim.guard.enter() != nil {
		return false
	}
	defer t.sim.guard.exit()
	if t.done {
		return false
	}
	t.done = true
	return true
}

// deliver is the step that fires the timer.
func (t *simTimer) deliver() {
	if t.done || t.owner.dead() || t.target.dead() {
		return
	}
	t.done = true
	t.sim.record(stepTimer, t.to.Id, t.msg)
	t.sim.sys.root.Send(t.to, t.msg)
}

// timerHeap orders timers by deadline, then creation.
type timerHeap []*simTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*simTimer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
