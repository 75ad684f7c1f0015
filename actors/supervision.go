package actors

import "github.com/asynkron/protoactor-go/actor"

// supervisionStrategy decides by counting only. A zero window makes protoactor count every
// failure of the actor's life without consulting the wall clock, so a simulation that runs
// faster or slower than real time takes the same decisions.
func supervisionStrategy(maxRestarts int) actor.SupervisorStrategy {
	if maxRestarts <= 0 {
		return actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive { return actor.StopDirective })
	}
	return actor.NewOneForOneStrategy(maxRestarts, 0, func(any) actor.Directive { return actor.RestartDirective })
}
