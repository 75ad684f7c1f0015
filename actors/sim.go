package actors

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"
)

// Sim is a deterministic simulated actor system. Placeholder until the scheduler lands: the
// API is fixed, the driving methods report errSimPending.
type Sim struct {
	guard *ownerGuard
}

var errSimPending = errors.New("actors: simulation not implemented yet")

func (s *Sim) propsOptions() []actor.PropsOption { return nil }

// RunUntil runs the simulation until cond holds.
func (s *Sim) RunUntil(cond func() bool) error { return errSimPending }

type ownerGuard struct{}

func (g *ownerGuard) enter() error { return nil }
func (g *ownerGuard) exit()        {}
