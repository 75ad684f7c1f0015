package compaction

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// failingFIO fails every file creation while armed.
type failingFIO struct {
	table.FileIO
	armed atomic.Bool
}

var errInjected = errors.New("injected create failure")

func (f *failingFIO) Create(p string) (table.WritableFile, error) {
	if f.armed.Load() {
		return nil, errInjected
	}
	return f.FileIO.Create(p)
}

// A round that cannot write fails its checkpoint, leaves readers on the
// previous state, and the next round catches up.
func TestFailedRoundFailsTheCheckpoint(t *testing.T) {
	e := newEnv(t, 1, nil)
	ffio := &failingFIO{FileIO: table.NewLocalFileIO()}
	tbl, err := table.Open(ffio, e.dir)
	if err != nil {
		t.Fatal(err)
	}
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 1}})
	sys := sim.System()
	defer sys.Close()
	store, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Spawn("maintenance", NewMaintainer(sys, tbl, Options{Config: Config{CheckInvariants: true}}))
	if err != nil {
		t.Fatal(err)
	}
	barrier := func(chk, snap int64) *RoundDone {
		sys.Request(pid, &Barrier{Checkpoint: chk, SnapshotID: snap}, store.PID())
		return expectRoundDone(t, store)
	}
	if d := barrier(1, e.commit(puts(0, 100, "a"), nil)); d.Err != nil {
		t.Fatal(d.Err)
	}
	before, _ := e.visible()
	ffio.armed.Store(true)
	// Deletes make the round rewrite the level-0 file, and every commit
	// writes manifests: either way it must create files.
	snap := e.commit(puts(100, 110, "b"), []int64{5})
	failed := barrier(2, snap)
	if failed.Err == nil || !strings.Contains(failed.Err.Error(), errInjected.Error()) {
		t.Fatalf("round under failing writes: %+v", failed)
	}
	after, _ := e.visible()
	if len(after) != len(before) {
		t.Fatalf("a failed round changed what readers see: %d keys, was %d", len(after), len(before))
	}
	ffio.armed.Store(false)
	if d := barrier(3, snap); d.Err != nil || !d.Committed {
		t.Fatalf("the round after the failure: %+v", d)
	}
	e.checkModel(nil)
}

// The store hears when backpressure starts and when it ends.
func TestBackpressureIsReported(t *testing.T) {
	e := newEnv(t, 1, map[string]string{
		table.OptionNumLevels: "6", table.OptionNumSortedRunTrigger: "1", table.OptionNumSortedRunStop: "1",
	})
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 2}})
	sys := sim.System()
	defer sys.Close()
	store, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Spawn("maintenance", NewMaintainer(sys, e.tbl, Options{Config: Config{CheckInvariants: true}, Notify: store.PID()}))
	if err != nil {
		t.Fatal(err)
	}
	var seen []bool
	for chk := int64(1); chk <= 3; chk++ {
		sys.Request(pid, &Barrier{Checkpoint: chk, SnapshotID: e.commit(puts(chk*10, chk*10+50, "v"), nil)}, store.PID())
		for {
			m, err := store.Next()
			if err != nil {
				t.Fatal(err)
			}
			if b, ok := m.(*BackpressureChanged); ok {
				seen = append(seen, b.Backpressure.Stalled)
				continue
			}
			if d := m.(*RoundDone); d.Err != nil {
				t.Fatal(d.Err)
			}
			break
		}
	}
	if err := sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	for _, m := range store.Drain() {
		if b, ok := m.(*BackpressureChanged); ok {
			seen = append(seen, b.Backpressure.Stalled)
		}
	}
	if len(seen) < 2 || !seen[0] || seen[len(seen)-1] {
		t.Fatalf("backpressure reports %v, want a stall and then its end", seen)
	}
	e.checkModel(nil)
}
