package actors

import "github.com/asynkron/protoactor-go/actor"

// simExecutor runs each job as one step on the simulation's goroutine; its result is delivered
// as a message, which is a later step of its own.
type simExecutor struct {
	sim *Sim
}

var _ Executor = simExecutor{}

func (e simExecutor) Submit(replyTo *actor.PID, work func() any) {
	s := e.sim
	if s.guard.enter() != nil {
		return
	}
	defer s.guard.exit()
	owner, target := s.current, s.mailboxes[replyTo.Id]
	s.enqueue(func() {
		if owner.dead() || target.dead() {
			return
		}
		s.record(stepExecutor, replyTo.Id, nil)
		s.sys.root.Send(replyTo, work())
	})
}
