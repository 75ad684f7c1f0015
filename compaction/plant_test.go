package compaction

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/internal/plant"
	"github.com/lakestate/lakestate/table"
)

// verdict is a testing.TB that turns the first failure into the verdict of
// a run instead of failing the test, so a test can require that a planted
// bug is caught.
type verdict struct {
	testing.TB
	failure string
}

func (v *verdict) Helper() {}
func (v *verdict) Fatal(args ...any) {
	v.failure = fmt.Sprint(args...)
	runtime.Goexit()
}
func (v *verdict) Fatalf(format string, args ...any) {
	v.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// checkSeed runs one seed of the maintenance simulation (data commits,
// barriers with the readers' view checked after each round, shaping in
// between, a crash every fourth checkpoint) and returns the first failure of
// the invariant checks or of the model, "" if none.
func checkSeed(t *testing.T, seed uint64, checkpoints int) string {
	v := &verdict{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}, TimerJumpChance: 0.05})
		defer sim.System().Close()
		sys := sim.System()
		e := newEnv(v, 2, map[string]string{table.OptionTargetFileSize: "8kb"})
		store, err := actors.NewProbe(sys, "store")
		if err != nil {
			v.Fatal(err)
		}
		producer := NewMaintainer(sys, e.tbl, Options{
			Config: Config{CheckInvariants: true, StepBytes: 8 << 10, ShapingBudget: 24 << 10, RetainSnapshots: 4},
			Every:  time.Second,
		})
		pid, err := sys.Spawn("maintenance", producer)
		if err != nil {
			v.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		var checked int64 // snapshots checked by oneCompactor
		for chk := int64(1); chk <= int64(checkpoints); chk++ {
			if chk%4 == 0 {
				sim.Crash(pid)
				if pid, err = sys.Spawn("maintenance", producer); err != nil {
					v.Fatal(err)
				}
			}
			p, d := randomChange(rng, e, "c"+itoa(chk))
			snap := e.commit(p, d)
			sys.Request(pid, &Barrier{Checkpoint: chk, SnapshotID: snap}, store.PID())
			var done *RoundDone
			for done == nil {
				m, err := store.Next()
				if err != nil {
					v.Fatal(err)
				}
				done, _ = m.(*RoundDone)
			}
			if done.Err != nil {
				v.Fatalf("checkpoint %d: round failed: %v", chk, done.Err)
			}
			e.checkModel(nil)
			checked = oneCompactor(v, e.tbl, checked)
			if _, err := sim.Run(rng.IntN(30)); err != nil {
				v.Fatal(err)
			}
			if rng.IntN(4) == 0 {
				if err := sim.RunFor(1500 * time.Millisecond); err != nil {
					v.Fatal(err)
				}
			}
			checked = oneCompactor(v, e.tbl, checked)
		}
	}()
	<-done
	return v.failure
}

// oneCompactor checks the snapshots after checked that have not expired:
// every COMPACT commit is the maintenance session's. It returns the newest
// snapshot checked.
func oneCompactor(v *verdict, t *table.Table, checked int64) int64 {
	latest, ok, err := t.LatestSnapshotID()
	if err != nil {
		v.Fatal(err)
	}
	if !ok {
		return checked
	}
	earliest, _, err := t.EarliestSnapshotID()
	if err != nil {
		v.Fatal(err)
	}
	for id := max(checked+1, earliest); id <= latest; id++ {
		s, err := t.Snapshot(id)
		if err != nil {
			v.Fatal(err)
		}
		if s.CommitKind == table.CommitCompact && s.CommitUser != DefaultCommitUser {
			v.Fatalf("snapshot %d: COMPACT committed by %q beside the maintenance session", id, s.CommitUser)
		}
	}
	return latest
}

// A planted maintenance bug must be caught within a few seeds, and the same
// seeds must pass without it.
func TestPlantedMaintenanceBugsAreCaught(t *testing.T) {
	const maxSeeds, checkpoints = 20, 12
	for _, bug := range []plant.Bug{plant.SkipBarrierRound, plant.TwoCompactors} {
		t.Run(bug.String(), func(t *testing.T) {
			release, err := plant.Enable([]plant.Bug{bug})
			if err != nil {
				t.Fatal(err)
			}
			var caughtAt uint64
			var failure string
			for seed := uint64(1); seed <= maxSeeds && caughtAt == 0; seed++ {
				if failure = checkSeed(t, seed, checkpoints); failure != "" {
					caughtAt = seed
				}
			}
			release()
			if caughtAt == 0 {
				t.Fatalf("%v not caught in %d seeds", bug, maxSeeds)
			}
			t.Logf("%v caught at seed %d: %s", bug, caughtAt, failure)
			for seed := uint64(1); seed <= caughtAt; seed++ {
				if f := checkSeed(t, seed, checkpoints); f != "" {
					t.Fatalf("seed %d fails without a planted bug: %s", seed, f)
				}
			}
		})
	}
}
