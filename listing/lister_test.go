package listing

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lakestate/lakestate/actors"
)

func TestListerFoldsDeltasSinceLastListing(t *testing.T) {
	h := newHistory()
	randomHistory(h, rand.New(rand.NewPCG(3, 4)), 40)
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	pid, err := sys.Spawn("lister", NewLister(sys, h))
	if err != nil {
		t.Fatal(err)
	}
	p, err := actors.NewProbe(sys, "probe")
	if err != nil {
		t.Fatal(err)
	}
	list := func(id int64) *Listed {
		t.Helper()
		sys.Request(pid, &List{SnapshotID: id}, p.PID())
		m, err := actors.Expect[*Listed](p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := list(10)
	if first.Err != nil || !first.Cost.FullWalk || first.Files.SnapshotID != 10 {
		t.Fatalf("first listing: %+v", first)
	}
	for _, id := range []int64{12, 12, 20, 40} {
		before := h.deltaReads
		prev := h.fullWalks
		m := list(id)
		if m.Err != nil {
			t.Fatal(m.Err)
		}
		if h.fullWalks != prev || m.Cost.FullWalk {
			t.Fatalf("listing %d walked the full chain", id)
		}
		want, _ := apply(NewLiveSet(h.BucketPath), readFull(h, readPlan{target: id}))
		if !reflect.DeepEqual(m.Files, want) {
			t.Fatalf("listing %d: %+v, want %+v", id, m.Files, want)
		}
		if got := h.deltaReads - before; got != m.Cost.Deltas {
			t.Fatalf("listing %d: cost says %d deltas, %d were read", id, m.Cost.Deltas, got)
		}
	}
	if m := list(30); m.Err == nil {
		t.Fatal("a listing back in time succeeded")
	}
}

// TestListerOnSimulation runs interleaved requests on the simulated system:
// answers come in request order and each matches a full walk.
func TestListerOnSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		h := newHistory()
		randomHistory(h, rand.New(rand.NewPCG(seed, 9)), 60)
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}})
		sys := sim.System()
		pid, err := sys.Spawn("lister", NewLister(sys, h))
		if err != nil {
			t.Fatal(err)
		}
		p, err := actors.NewProbe(sys, "probe")
		if err != nil {
			t.Fatal(err)
		}
		targets := []int64{3, 9, 9, 27, 41, 60}
		wants := map[int64]LiveFiles{}
		for _, id := range targets {
			wants[id], _ = apply(NewLiveSet(h.BucketPath), readFull(h, readPlan{target: id}))
		}
		walks := h.fullWalks
		for _, id := range targets {
			sys.Request(pid, &List{SnapshotID: id}, p.PID())
		}
		for _, id := range targets {
			m, err := actors.Expect[*Listed](p)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if m.Err != nil || !reflect.DeepEqual(m.Files, wants[id]) {
				t.Fatalf("seed %d listing %d: %+v (err %v)", seed, id, m.Files, m.Err)
			}
		}
		if got := h.fullWalks - walks; got != 1 {
			t.Fatalf("seed %d: %d full walks, want 1", seed, got)
		}
		sim.System().Close()
	}
}
