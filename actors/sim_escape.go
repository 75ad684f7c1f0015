package actors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
)

// checkSpawn is the spawn middleware of every simulated actor: a child whose mailbox did not
// register with the simulation was spawned with Props not built by actors, and runs on real
// goroutines behind the scheduler's back.
func (s *Sim) checkSpawn(next actor.SpawnFunc) actor.SpawnFunc {
	return func(as *actor.ActorSystem, id string, props *actor.Props, parent actor.SpawnerContext) (*actor.PID, error) {
		pid, err := next(as, id, props, parent)
		if err == nil {
			if _, ours := s.mailboxes[pid.Id]; !ours {
				s.fail(fmt.Errorf("%w: actor %s was spawned with Props not built by actors; spawn it with System.SpawnChild", ErrEscapedActor, pid.Id))
			}
		}
		return pid, err
	}
}

// ErrEscapedActor reports an actor that runs outside the simulation's scheduler.
var ErrEscapedActor = errors.New("actors: actor escaped the simulation")

// scanForEscapes looks through the process registry for actors without a simulated mailbox,
// which checkSpawn cannot see when they were spawned from protoactor's root context.
func (s *Sim) scanForEscapes() error {
	s.sinceScan = 0
	var escaped []string
	for _, bucket := range s.sys.actors.ProcessRegistry.LocalPIDs.LocalPIDs {
		bucket.IterCb(func(id string, proc any) {
			if _, isActor := proc.(*actor.ActorProcess); !isActor {
				return
			}
			if _, ours := s.mailboxes[id]; !ours {
				escaped = append(escaped, id)
			}
		})
	}
	if len(escaped) > 0 {
		slices.Sort(escaped)
		s.fail(fmt.Errorf("%w: actors %v have mailboxes the simulation does not own; spawn them with System.Spawn or System.SpawnChild", ErrEscapedActor, escaped))
	}
	return s.Err()
}
