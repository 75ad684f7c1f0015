package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// rally bounces a counter between two actors until it reaches zero, then tells a probe.
type rally struct {
	probe *actor.PID
}

type ball struct {
	left int
	back *actor.PID
}

func (r *rally) Receive(ctx actor.Context) {
	if msg, ok := ctx.Message().(ball); ok {
		if msg.left == 0 {
			ctx.Send(r.probe, "rally done")
			return
		}
		ctx.Send(msg.back, ball{left: msg.left - 1, back: ctx.Self()})
	}
}

func benchRally(b *testing.B, sys *System, waitDone func(*Probe)) {
	probe, err := NewProbe(sys, "probe")
	if err != nil {
		b.Fatal(err)
	}
	a, _ := sys.Spawn("a", func() actor.Actor { return &rally{probe: probe.PID()} })
	c, _ := sys.Spawn("b", func() actor.Actor { return &rally{probe: probe.PID()} })
	b.ResetTimer()
	sys.Send(a, ball{left: b.N, back: c})
	waitDone(probe)
}

// Side by side: one message hop on the real system versus one simulated step.
func BenchmarkMessageHop(b *testing.B) {
	b.Run("real", func(b *testing.B) {
		sys := NewSystem(Options{})
		defer sys.Close()
		benchRally(b, sys, func(p *Probe) {
			if _, err := p.Next(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("sim", func(b *testing.B) {
		sim := NewSim(SimOptions{Options: Options{Seed: 1}})
		benchRally(b, sim.System(), func(p *Probe) {
			if _, err := p.Next(); err != nil {
				b.Fatal(err)
			}
		})
	})
}
