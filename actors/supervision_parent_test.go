package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// stopsChildren spawns a fragile child and supervises it itself: a child
// that panicked is stopped, whatever the system's restart budget.
type stopsChildren struct {
	sys   *System
	probe *actor.PID
	child *actor.PID
}

func (s *stopsChildren) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		s.child, _ = s.sys.SpawnChild(ctx, "fragile", func() actor.Actor { return &fragile{probe: s.probe} })
		ctx.Send(s.probe, s.child)
	}
}

func (s *stopsChildren) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, _, _ any) {
	sup.StopChildren(child)
}

// A parent that implements actor.SupervisorStrategy decides for its
// children over the system's strategy, in the real system and in a
// simulation: a table agent relies on it to have its maintainer and lister
// stopped (and replaced) rather than restarted in place.
func TestParentStrategyDecidesForItsChildren(t *testing.T) {
	for _, simulated := range []bool{false, true} {
		name := "real"
		if simulated {
			name = "sim"
		}
		t.Run(name, func(t *testing.T) {
			opts := Options{MaxRestarts: 2}
			var sys *System
			if simulated {
				sys = NewSim(SimOptions{Options: opts}).System()
			} else {
				sys = newRealSystem(t, opts)
			}
			probe := mustProbe(t, sys, "probe")
			mustSpawn(t, sys, "parent", func() actor.Actor { return &stopsChildren{sys: sys, probe: probe.PID()} })
			// The parent's report of its child and the child's own start
			// race each other on the real system.
			var child *actor.PID
			started := false
			for range 2 {
				msg, err := probe.Next()
				if err != nil {
					t.Fatal(err)
				}
				switch msg := msg.(type) {
				case *actor.PID:
					child = msg
				case string:
					started = msg == "started"
				}
			}
			if child == nil || !started {
				t.Fatalf("child %v, started %v; want the child spawned and started", child, started)
			}
			probe.Watch(child)
			sys.Send(child, boom{})
			term, err := Expect[*actor.Terminated](probe)
			if err != nil {
				t.Fatalf("the panicked child was not stopped: %v", err)
			}
			if !term.Who.Equal(child) {
				t.Fatalf("terminated %v, want %v", term.Who, child)
			}
		})
	}
}
