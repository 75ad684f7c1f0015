package actors

import "github.com/asynkron/protoactor-go/actor"

// simDispatcher is the dispatcher of every simulated actor. Schedule only enqueues: the
// simulation's driver decides when, and in which order, scheduled work runs.
type simDispatcher struct {
	sim *Sim
}

var _ actor.Dispatcher = (*simDispatcher)(nil)

// Schedule is called only by step mailboxes, right after their own post check (or from their
// own step), so it need not repeat the guard's check.
func (d *simDispatcher) Schedule(fn func()) {
	d.sim.enqueue(fn)
}

// Throughput is irrelevant: the step mailbox handles one message per scheduled step.
func (d *simDispatcher) Throughput() int { return 1 }

// propsOptions wire a Props to the simulation: a fresh step mailbox per actor, the sim's
// dispatcher, and a spawn check that catches children spawned with foreign Props.
func (s *Sim) propsOptions() []actor.PropsOption {
	return []actor.PropsOption{
		actor.WithMailbox(func() actor.Mailbox { return newStepMailbox(s) }),
		actor.WithDispatcher(s.dispatcher),
		actor.WithSpawnMiddleware(s.checkSpawn),
	}
}
