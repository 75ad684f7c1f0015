package actors

import (
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// DefaultProbeWait bounds how long Probe.Next waits for a message in the real system before it
// reports an error, so a test that misses a message fails instead of hanging.
const DefaultProbeWait = 30 * time.Second

// Probe is an actor that collects the messages it receives so that code outside the actors
// (tests, drivers) can wait for them without sleeping. In the real system Next blocks until a
// message arrives; in a simulation Next runs the simulation until one does.
type Probe struct {
	sys  *System
	pid  *actor.PID
	wait time.Duration

	mu       sync.Mutex
	messages []any
	arrived  chan struct{} // signalled (without blocking) when a message is appended
}

// probeWatch asks the probe actor to watch an actor, so its termination arrives as a message.
type probeWatch struct{ pid *actor.PID }

// NewProbe spawns a probe named name.
func NewProbe(sys *System, name string) (*Probe, error) {
	p := &Probe{sys: sys, wait: DefaultProbeWait, arrived: make(chan struct{}, 1)}
	pid, err := sys.Spawn(name, func() actor.Actor { return p })
	if err != nil {
		return nil, fmt.Errorf("actors: spawn probe %q: %w", name, err)
	}
	p.pid = pid
	return p, nil
}

// Receive implements actor.Actor.
func (p *Probe) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	case probeWatch:
		ctx.Watch(msg.pid)
	default:
		p.mu.Lock()
		p.messages = append(p.messages, msg)
		p.mu.Unlock()
		select {
		case p.arrived <- struct{}{}:
		default:
		}
	}
}

// PID is where to send messages for the probe.
func (p *Probe) PID() *actor.PID { return p.pid }

// Watch makes the termination of the actor at pid arrive at the probe as *actor.Terminated.
func (p *Probe) Watch(pid *actor.PID) { p.sys.Send(p.pid, probeWatch{pid: pid}) }

// SetWait changes how long Next waits in the real system.
func (p *Probe) SetWait(d time.Duration) { p.wait = d }

// Len is the number of messages received and not yet taken.
func (p *Probe) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.messages)
}

// Drain takes every message received so far, oldest first, without waiting.
func (p *Probe) Drain() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.messages
	p.messages = nil
	return out
}

// Next takes the oldest message, waiting for one: in a simulation by running it until a message
// arrives (an error if the simulation goes idle or fails first), in the real system by blocking
// up to the probe's wait.
func (p *Probe) Next() (any, error) {
	if err := p.await(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := p.messages[0]
	p.messages[0] = nil
	p.messages = p.messages[1:]
	return msg, nil
}

func (p *Probe) await() error {
	if sim, ok := p.sys.Simulated(); ok {
		if err := sim.RunUntil(func() bool { return p.Len() > 0 }); err != nil {
			return fmt.Errorf("actors: probe %s waiting for a message: %w", p.pid.Id, err)
		}
		return nil
	}
	deadline := time.NewTimer(p.wait)
	defer deadline.Stop()
	for p.Len() == 0 {
		select {
		case <-p.arrived:
		case <-deadline.C:
			return fmt.Errorf("actors: probe %s received no message within %v", p.pid.Id, p.wait)
		}
	}
	return nil
}

// Expect takes the probe's next message, which must be a T.
func Expect[T any](p *Probe) (T, error) {
	var zero T
	msg, err := p.Next()
	if err != nil {
		return zero, err
	}
	t, ok := msg.(T)
	if !ok {
		return zero, fmt.Errorf("actors: probe %s: got %T (%v), want %T", p.pid.Id, msg, msg, zero)
	}
	return t, nil
}
