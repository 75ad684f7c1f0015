package barrier

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
)

// recordingSupervisor records what a supervisor strategy decided.
type recordingSupervisor struct {
	stopped, restarted, resumed []*actor.PID
	escalated                   int
}

func (r *recordingSupervisor) Children() []*actor.PID   { return nil }
func (r *recordingSupervisor) EscalateFailure(any, any) { r.escalated++ }
func (r *recordingSupervisor) RestartChildren(p ...*actor.PID) {
	r.restarted = append(r.restarted, p...)
}
func (r *recordingSupervisor) StopChildren(p ...*actor.PID)   { r.stopped = append(r.stopped, p...) }
func (r *recordingSupervisor) ResumeChildren(p ...*actor.PID) { r.resumed = append(r.resumed, p...) }

// A table agent supervises its maintainer and lister itself (a parent that
// is an actor.SupervisorStrategy decides for its children; see actors'
// TestParentStrategyDecidesForItsChildren): one that panicked is stopped,
// not restarted in place, even when the system restarts panicking actors,
// so the agent's Terminated path replaces it and answers its outstanding
// requests.
func TestTableAgentStopsPanickedChildren(t *testing.T) {
	sys := actors.NewSystem(actors.Options{MaxRestarts: 3})
	defer sys.Close()
	a := newTableAgent(sys, "agg", nil, nil, compaction.Options{})()
	strategy, ok := a.(actor.SupervisorStrategy)
	if !ok {
		t.Fatal("the table agent leaves its children to the system's strategy")
	}
	child := actor.NewPID("nonhost", "agent/maint-1")
	sup := &recordingSupervisor{}
	strategy.HandleFailure(nil, sup, child, actor.NewRestartStatistics(), "boom", nil)
	if len(sup.stopped) != 1 || !sup.stopped[0].Equal(child) || len(sup.restarted)+len(sup.resumed)+sup.escalated != 0 {
		t.Fatalf("stopped %v, restarted %v, resumed %v, escalated %d: want the child stopped", sup.stopped, sup.restarted, sup.resumed, sup.escalated)
	}
}
