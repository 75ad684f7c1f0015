package actors

import (
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
)

// Crash simulates the crash of the process that runs the actors at pids: each of them and all
// their descendants vanish at once, in the middle of whatever they were doing. Their queued
// messages are dropped, as are timers and executor jobs they set or that were aimed at them.
// Their names are unregistered, so later sends become dead letters and the names can be spawned
// again. Their parents and watchers outside the group receive *actor.Terminated with reason
// AddressTerminated, as from a node that died. Actors already gone are ignored. Crash returns
// how many actors crashed.
func (s *Sim) Crash(pids ...*actor.PID) int {
	if s.guard.enter() != nil {
		return 0
	}
	defer s.guard.exit()

	group := s.crashGroup(pids)
	crashed := make(map[string]bool, len(group))
	for _, m := range group {
		crashed[m.self.Id] = true
		m.crashed = true
		m.system.clear()
		m.user.clear()
		delete(s.mailboxes, m.self.Id)
		s.sys.actors.ProcessRegistry.Remove(m.self)
		s.record(stepCrash, m.self.Id, nil)
	}
	for _, t := range s.clock.timers {
		if t.owner.dead() || t.target.dead() {
			t.done = true
		}
	}
	for _, m := range group {
		term := &actor.Terminated{Who: m.self, Why: actor.TerminatedReason_AddressTerminated}
		for _, to := range append([]*actor.PID{m.parent}, m.watchers...) {
			if to == nil || crashed[to.Id] {
				continue
			}
			proc, _ := s.sys.actors.ProcessRegistry.Get(to)
			proc.SendSystemMessage(to, term)
		}
	}
	return len(group)
}

// crashGroup is the live actors at pids and their descendants, ordered by id so that crash
// notifications go out in a deterministic order.
func (s *Sim) crashGroup(pids []*actor.PID) []*stepMailbox {
	var ids []string
	for id := range s.mailboxes {
		for _, pid := range pids {
			if id == pid.Id || strings.HasPrefix(id, pid.Id+"/") {
				ids = append(ids, id)
				break
			}
		}
	}
	slices.Sort(ids)
	group := make([]*stepMailbox, len(ids))
	for i, id := range ids {
		group[i] = s.mailboxes[id]
	}
	return group
}
