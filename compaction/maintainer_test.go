package compaction

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// randomChange is a data commit of a random workload: updates over a key
// space, some deletes.
func randomChange(rng *rand.Rand, e *env, tag string) (map[int64]row, []int64) {
	p := map[int64]row{}
	ts := int64(1)
	for i := 0; i < 40+rng.IntN(200); i++ {
		p[rng.Int64N(1500)] = row{v: tag, ts: &ts}
	}
	var d []int64
	for i := 0; i < rng.IntN(10); i++ {
		k := rng.Int64N(1500)
		if _, ok := p[k]; !ok {
			d = append(d, k)
		}
	}
	return p, d
}

// driveMaintainer runs checkpoints against a Maintainer: a data commit, a
// Barrier, and in between some maintenance, as the store would. It checks
// readers' view after every round.
// With crashEvery > 0 (simulation only) the maintenance actor crashes
// before every crashEvery-th barrier and is spawned again, as a restarted
// process would: the new session walks the table once and goes on.
func driveMaintainer(t *testing.T, sys *actors.System, between func(i int), seed uint64, checkpoints, crashEvery int) *env {
	t.Helper()
	e := newEnv(t, 2, map[string]string{table.OptionTargetFileSize: "8kb"})
	store, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	producer := NewMaintainer(sys, e.tbl, Options{
		Config: Config{CheckInvariants: true, StepBytes: 8 << 10, ShapingBudget: 24 << 10, RetainSnapshots: 4},
		Notify: store.PID(),
		Every:  time.Second,
	})
	pid, err := sys.Spawn("maintenance", producer)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	for chk := int64(1); chk <= int64(checkpoints); chk++ {
		if crashEvery > 0 && chk%int64(crashEvery) == 0 {
			sim, _ := sys.Simulated()
			sim.Crash(pid)
			if pid, err = sys.Spawn("maintenance", producer); err != nil {
				t.Fatal(err)
			}
		}
		p, d := randomChange(rng, e, "c"+itoa(chk))
		snap := e.commit(p, d)
		sys.Request(pid, &Barrier{Checkpoint: chk, SnapshotID: snap}, store.PID())
		done := expectRoundDone(t, store)
		if done.Err != nil {
			t.Fatalf("seed %d checkpoint %d: %v", seed, chk, done.Err)
		}
		if done.Checkpoint != chk || done.SnapshotID < snap {
			t.Fatalf("seed %d: %+v answers checkpoint %d after snapshot %d", seed, done, chk, snap)
		}
		e.checkModel(nil)
		if chk > 2 {
			sys.Send(pid, &Unpin{Checkpoint: chk - 2, UpTo: chk%3 == 0})
		}
		between(int(chk))
	}
	return e
}

// expectRoundDone waits for the next RoundDone, skipping backpressure news.
func expectRoundDone(t *testing.T, p *actors.Probe) *RoundDone {
	t.Helper()
	for {
		m, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := m.(*RoundDone); ok {
			return d
		}
	}
}

func TestMaintainerOnSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}, TimerJumpChance: 0.05})
		rng := rand.New(rand.NewPCG(seed, 5))
		driveMaintainer(t, sim.System(), func(int) {
			if _, err := sim.Run(rng.IntN(30)); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(4) == 0 {
				if err := sim.RunFor(1500 * time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
		}, seed, 15, 4)
		sim.System().Close()
	}
}

// The same seed gives the same run: every message, job and timer in the
// same order, with the same contents.
func TestMaintainerSimulationIsDeterministic(t *testing.T) {
	run := func() uint64 {
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 7}, TimerJumpChance: 0.05})
		defer sim.System().Close()
		rng := rand.New(rand.NewPCG(7, 5))
		driveMaintainer(t, sim.System(), func(int) {
			if _, err := sim.Run(rng.IntN(30)); err != nil {
				t.Fatal(err)
			}
		}, 7, 8, 3)
		return sim.TraceHash()
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("seed 7 traced %x, then %x", a, b)
	}
}

func TestMaintainerOnRealSystem(t *testing.T) {
	sys := actors.NewSystem(actors.Options{Seed: 1})
	defer sys.Close()
	driveMaintainer(t, sys, func(int) {}, 1, 12, 0)
}

// A barrier that arrives while a shaping step runs waits for that step and
// no other: it goes before the next one.
func TestBarrierWaitsForAtMostOneStep(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "8kb"})
		setup := e.session(Config{})
		for i, lo := range []int64{0, 150, 2000, 2150, 5000} {
			e.round(setup, puts(lo, lo+300, "v"+itoa(int64(i))), nil)
		}
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}})
		sys := sim.System()
		store, err := actors.NewProbe(sys, "store")
		if err != nil {
			t.Fatal(err)
		}
		pid, err := sys.Spawn("maintenance", NewMaintainer(sys, e.tbl, Options{Config: Config{CheckInvariants: true, StepBytes: 4 << 10}}))
		if err != nil {
			t.Fatal(err)
		}
		// Seed the view first, so the next job is a shaping step.
		sys.Request(pid, &Barrier{Checkpoint: 1, SnapshotID: e.commit(puts(9000, 9010, "a"), nil)}, store.PID())
		if done := expectRoundDone(t, store); done.Err != nil {
			t.Fatal(done.Err)
		}
		snap := e.commit(puts(9100, 9110, "b"), nil)
		sys.Request(pid, &Barrier{Checkpoint: 2, SnapshotID: snap}, store.PID())
		done := expectRoundDone(t, store)
		if done.Err != nil {
			t.Fatal(done.Err)
		}
		if done.WaitedJobs > 1 {
			t.Fatalf("seed %d: the barrier waited for %d jobs", seed, done.WaitedJobs)
		}
		sys.Request(pid, &Barrier{Checkpoint: 3, SnapshotID: done.SnapshotID}, store.PID())
		later := expectRoundDone(t, store)
		if later.Err != nil || later.WaitedJobs > 1 {
			t.Fatalf("seed %d: %+v", seed, later)
		}
		if err := sim.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		sys.Request(pid, &Barrier{Checkpoint: 4, SnapshotID: later.SnapshotID}, store.PID())
		last := expectRoundDone(t, store)
		if last.Stats.Steps < 2 {
			t.Fatalf("seed %d: %d shaping steps in all; the test needs a multi-step compaction", seed, last.Stats.Steps)
		}
		e.checkModel(nil)
		sys.Close()
	}
}
