package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// Clock is the only source of time for actors. Timers are messages: an actor never waits, it
// asks for a message to be delivered later.
type Clock interface {
	// Now is the current time: wall-clock in the real system, virtual in a simulation.
	Now() time.Time
	// SendAfter delivers msg to the actor at to once d has passed (at once if d <= 0), with no
	// sender. The returned Timer cancels the delivery.
	SendAfter(d time.Duration, to *actor.PID, msg any) Timer
}

// Timer is a pending SendAfter delivery.
type Timer interface {
	// Stop cancels the delivery. It reports false if the message was already delivered (or is
	// being delivered) or the timer was already stopped.
	Stop() bool
}

// wallClock is the real system's clock; its timers run on time.AfterFunc goroutines, which is
// allowed here because they only post a message.
type wallClock struct {
	root *actor.RootContext
}

func (c wallClock) Now() time.Time { return time.Now() }

func (c wallClock) SendAfter(d time.Duration, to *actor.PID, msg any) Timer {
	return time.AfterFunc(d, func() { c.root.Send(to, msg) })
}
