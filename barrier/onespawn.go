package barrier

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// oneSpawn returns a producer that serves one spawn with first. What a
// supervisor's restart after a panic gets from it is an actor that logs
// what was lost (msg with attrs) and stops at once, so the job fails over:
// the state of the lost instance cannot be rebuilt from its configuration.
func oneSpawn(sys *actors.System, first func() actor.Actor, msg string, attrs ...any) actor.Producer {
	var made atomic.Int32
	return func() actor.Actor {
		if made.Add(1) > 1 {
			return &stopsAtRestart{sys: sys, msg: msg, attrs: attrs}
		}
		return first()
	}
}

// stopsAtRestart replaces an actor that panicked and was restarted by its
// supervisor: it stops at once (the parent or a watcher sees it terminate).
type stopsAtRestart struct {
	sys   *actors.System
	msg   string
	attrs []any
}

func (r *stopsAtRestart) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		r.sys.Logger().Error(r.msg, r.attrs...)
		ctx.Stop(ctx.Self())
	}
}
