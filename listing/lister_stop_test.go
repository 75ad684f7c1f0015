package listing

import (
	"math/rand/v2"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

type (
	heldJob    struct{}
	queueEmpty struct{}
)

// A read the lister started but the executor had not run when the lister
// stopped never reads the table: its directory may be on its way out. One
// executor slot, held while the lister queues its read and stops; the job
// queued after the read tells when the read's turn has passed.
func TestStoppedListerReadsNothing(t *testing.T) {
	h := newHistory()
	randomHistory(h, rand.New(rand.NewPCG(3, 4)), 10)
	sys := actors.NewSystem(actors.Options{ExecutorLimit: 1})
	defer sys.Close()
	p, err := actors.NewProbe(sys, "probe")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	sys.Executor().Submit(p.PID(), func() any { <-hold; return &heldJob{} })
	pid, err := sys.Spawn("lister", NewLister(sys, h))
	if err != nil {
		t.Fatal(err)
	}
	p.Watch(pid)
	sys.Request(pid, &List{SnapshotID: 10}, p.PID())
	sys.Poison(pid) // after the List: its read is queued by then
	for {
		m, err := p.Next()
		if err != nil {
			close(hold)
			t.Fatal(err)
		}
		if term, ok := m.(*actor.Terminated); ok && term.Who.Equal(pid) {
			break
		}
	}
	sys.Executor().Submit(p.PID(), func() any { return &queueEmpty{} })
	close(hold)
	if _, err := actors.Expect[*heldJob](p); err != nil {
		t.Fatal(err)
	}
	if _, err := actors.Expect[*queueEmpty](p); err != nil {
		t.Fatal(err)
	}
	if h.fullWalks+h.deltaReads+h.snapshotReads != 0 {
		t.Fatalf("the stopped lister read the table: %d full walks, %d deltas, %d snapshots", h.fullWalks, h.deltaReads, h.snapshotReads)
	}
}
