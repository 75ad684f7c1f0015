package listing

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// supervisor spawns a lister as its child and restarts it on request, as
// its supervisor does after a panic: the restarted lister starts from an
// empty set with the same PID and mailbox.
type supervisor struct {
	sys   *actors.System
	src   Source
	child *actor.PID
}

type (
	// forward sends List to the lister, with replyTo as the sender.
	forward struct {
		list    *List
		replyTo *actor.PID
	}
	// restartThenForward restarts the lister, then forwards: the restart
	// is a system message, handled before any List in the mailbox.
	restartThenForward forward
	// supervised acknowledges a request to the supervisor.
	supervised struct{}
)

func (s *supervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.child, _ = s.sys.SpawnChild(ctx, "lister", NewLister(s.sys, s.src))
	case *forward:
		s.sys.Request(s.child, m.list, m.replyTo)
		s.sys.Send(m.replyTo, &supervised{})
	case *restartThenForward:
		ctx.(actor.Supervisor).RestartChildren(s.child)
		s.sys.Request(s.child, m.list, m.replyTo)
		s.sys.Send(m.replyTo, &supervised{})
	}
}

// holdFirstWalk holds the first full walk of its history until release.
type holdFirstWalk struct {
	*history
	once             sync.Once
	entered, release chan struct{}
}

func (h *holdFirstWalk) LiveFiles(id int64) ([]table.ManifestEntry, []table.IndexManifestEntry, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
	return h.history.LiveFiles(id)
}

// A lister restarted while the replaced instance's read runs ignores that
// read's result when it arrives: the new instance's set is empty and its
// own request waits, so taking the stale read would answer that request
// with another snapshot's files. One executor slot: the stale read ends
// before the new instance's read runs, so its result is in the mailbox
// first. (A read not started by the restart never reads: see
// TestStoppedListerReadsNothing, the same path.)
func TestRestartedListerIgnoresStaleRead(t *testing.T) {
	h := newHistory()
	randomHistory(h, rand.New(rand.NewPCG(5, 6)), 10)
	src := &holdFirstWalk{history: h, entered: make(chan struct{}), release: make(chan struct{})}
	sys := actors.NewSystem(actors.Options{ExecutorLimit: 1})
	defer sys.Close()
	p, err := actors.NewProbe(sys, "probe")
	if err != nil {
		t.Fatal(err)
	}
	sup, err := sys.Spawn("supervisor", func() actor.Actor { return &supervisor{sys: sys, src: src} })
	if err != nil {
		t.Fatal(err)
	}
	sys.Send(sup, &forward{list: &List{SnapshotID: 5}, replyTo: p.PID()})
	<-src.entered // the first instance's read walks snapshot 5
	sys.Send(sup, &restartThenForward{list: &List{SnapshotID: 10}, replyTo: p.PID()})
	for range 2 {
		if _, err := actors.Expect[*supervised](p); err != nil {
			close(src.release)
			t.Fatal(err)
		}
	}
	close(src.release)
	got := nextListed(t, p)
	if got.Err != nil || got.Files.SnapshotID != 10 || !got.Cost.FullWalk {
		t.Fatalf("the restarted lister answered snapshot %d (full walk %t, err %v), want its own walk of snapshot 10",
			got.Files.SnapshotID, got.Cost.FullWalk, got.Err)
	}
	// The next request folds nothing: the set is at 10, as a fresh
	// lister's would be.
	sys.Send(sup, &forward{list: &List{SnapshotID: 10}, replyTo: p.PID()})
	again := nextListed(t, p)
	if again.Cost.FullWalk || again.Cost.Deltas != 0 {
		t.Fatalf("the second listing of snapshot 10 read again: %+v", again.Cost)
	}
	if h.fullWalks != 2 {
		t.Fatalf("%d full walks, want 2: the stale one and the new instance's", h.fullWalks)
	}
	want := fresh(t, h, 10)
	if again.Err != nil || !sameFiles(got.Files, want) || !sameFiles(again.Files, want) {
		t.Fatalf("the restarted lister's files differ from a fresh listing of snapshot 10 (err %v)", again.Err)
	}
}

// nextListed takes the probe's next answer of a lister, past the other
// messages of the test.
func nextListed(t *testing.T, p *actors.Probe) *Listed {
	t.Helper()
	for {
		m, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := m.(*Listed); ok {
			return l
		}
	}
}

// fresh lists snapshot id of h with a new set, off the actors.
func fresh(t *testing.T, h *history, id int64) LiveFiles {
	t.Helper()
	set := NewLiveSet(h.BucketPath)
	plan, err := planRead(set, id)
	if err != nil {
		t.Fatal(err)
	}
	files, err := apply(set, read(h, plan))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(a, b LiveFiles) bool {
	if a.SnapshotID != b.SnapshotID || a.IndexManifest != b.IndexManifest || len(a.Data) != len(b.Data) || len(a.Index) != len(b.Index) {
		return false
	}
	for i := range a.Data {
		if a.Data[i].Path != b.Data[i].Path || a.Data[i].Size != b.Data[i].Size || a.Data[i].Level != b.Data[i].Level {
			return false
		}
	}
	for i := range a.Index {
		if a.Index[i].Path != b.Index[i].Path || a.Index[i].Size != b.Index[i].Size {
			return false
		}
	}
	return true
}
