package actors

import "github.com/asynkron/protoactor-go/actor"

// simDispatcher is the dispatcher of every simulated actor. Schedule only enqueues: the
// simulation's driver decides when, and in which order, scheduled work runs.
type simDispatcher struct {
	sim *Sim
}

var _ actor.Dispatcher = (*simDispatcher)(nil)

func (d *simDispatcher) Schedule(fn func()) {
	if !d.sim.guard.checkPost("a scheduled step") {
		return
	}
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
