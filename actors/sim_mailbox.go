package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// stepMailbox handles one message per scheduled step, so the simulation interleaves actors
// message by message (protoactor's default mailbox drains its whole queue in one go, which hides
// almost every interleaving from a scheduler). Like the default mailbox it runs system messages
// before user messages, holds user messages while suspended, and turns a panic into
// EscalateFailure. It is only touched on the simulation's goroutine.
type stepMailbox struct {
	sim        *Sim
	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	self       *actor.PID
	parent     *actor.PID // nil for an actor without a parent context (never for ours)

	system    fifo
	user      fifo
	suspended bool
	scheduled bool
	crashed   bool
	// watchers are the PIDs that asked to watch this actor; a crash notifies them as the
	// actor itself no longer can.
	watchers []*actor.PID
}

var _ actor.Mailbox = (*stepMailbox)(nil)

func newStepMailbox(s *Sim) *stepMailbox { return &stepMailbox{sim: s} }

// lifecycle is what the invoker (protoactor's actor context) tells about its actor.
type lifecycle interface {
	Self() *actor.PID
	Parent() *actor.PID
}

func (m *stepMailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker = invoker
	m.dispatcher = dispatcher
	if ctx, ok := invoker.(lifecycle); ok {
		m.self, m.parent = ctx.Self(), ctx.Parent()
	}
	if m.self == nil {
		panic("actors: step mailbox registered by an invoker without a PID")
	}
	m.sim.mailboxes[m.self.Id] = m
}

func (m *stepMailbox) Start() {}

func (m *stepMailbox) UserMessageCount() int { return m.user.len() }

func (m *stepMailbox) PostUserMessage(msg any) {
	if !m.sim.guard.checkPost("a message for " + m.name()) {
		return
	}
	if m.crashed {
		return
	}
	m.user.push(msg)
	m.schedule()
}

func (m *stepMailbox) PostSystemMessage(msg any) {
	if !m.sim.guard.checkPost("a system message for " + m.name()) {
		return
	}
	if m.crashed {
		return
	}
	switch msg := msg.(type) {
	case *actor.Watch:
		m.watchers = append(m.watchers, msg.Watcher)
	case *actor.Unwatch:
		m.watchers = removePID(m.watchers, msg.Watcher)
	}
	m.system.push(msg)
	m.schedule()
}

func (m *stepMailbox) name() string {
	if m.self == nil {
		return "an actor being spawned"
	}
	return m.self.Id
}

func (m *stepMailbox) runnable() bool {
	return m.system.len() > 0 || (!m.suspended && m.user.len() > 0)
}

func (m *stepMailbox) schedule() {
	if m.scheduled || m.crashed || !m.runnable() {
		return
	}
	m.scheduled = true
	m.dispatcher.Schedule(m.handleOne)
}

// handleOne is one step: the next system message, or else the next user message.
func (m *stepMailbox) handleOne() {
	m.scheduled = false
	if m.crashed {
		return
	}
	previous := m.sim.current
	m.sim.current = m
	defer func() { m.sim.current = previous }()

	if msg, ok := m.system.pop(); ok {
		m.sim.record(stepMessage, m.self.Id, msg)
		switch msg.(type) {
		case *actor.SuspendMailbox:
			m.suspended = true
		case *actor.ResumeMailbox:
			m.suspended = false
		default:
			m.invoke(msg, m.invoker.InvokeSystemMessage)
			m.forgetIfStopped()
		}
	} else if !m.suspended {
		if msg, ok := m.user.pop(); ok {
			m.sim.record(stepMessage, m.self.Id, msg)
			m.invoke(msg, m.invoker.InvokeUserMessage)
		}
	}
	m.schedule()
}

func (m *stepMailbox) invoke(msg any, handle func(any)) {
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	handle(msg)
}

// forgetIfStopped drops the simulation's reference to an actor protoactor has unregistered.
func (m *stepMailbox) forgetIfStopped() {
	if _, ok := m.sim.sys.actors.ProcessRegistry.GetLocal(m.self.Id); ok {
		return
	}
	if m.sim.mailboxes[m.self.Id] == m {
		delete(m.sim.mailboxes, m.self.Id)
	}
}

// dead reports whether work owned by or aimed at m must be dropped; a nil mailbox (work from the
// driver, or aimed at something that is not a simulated actor) is never dead.
func (m *stepMailbox) dead() bool { return m != nil && m.crashed }

func removePID(pids []*actor.PID, pid *actor.PID) []*actor.PID {
	out := pids[:0]
	for _, p := range pids {
		if !p.Equal(pid) {
			out = append(out, p)
		}
	}
	return out
}

// fifo is a queue of messages.
type fifo struct {
	items []any
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(msg any) { q.items = append(q.items, msg) }

func (q *fifo) pop() (any, bool) {
	if q.len() == 0 {
		return nil, false
	}
	msg := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return msg, true
}

func (q *fifo) clear() {
	clear(q.items)
	q.items, q.head = nil, 0
}
