package sim

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// runReal runs the workload on the real actor system, with real files
// under Config.Dir: the actors run on goroutines, so the race detector sees
// what the simulation's single goroutine hides. Faults are those a run
// survives without a driver that owns the schedule: blob failures and
// ambiguous timeouts, lost and late notifications, and one restart from the
// newest checkpoint halfway, at another parallelism.
func (e *env) runReal() Result {
	e.sys = actors.NewSystem(actors.Options{Seed: e.cfg.Seed, ExecutorLimit: 4, Logger: slog.New(&logWatch{env: e})})
	defer e.sys.Close()
	e.check = newChecker(func() uint64 { return 0 })
	e.newStores(table.NewLocalFileIO())
	e.root = e.cfg.Dir
	e.timeout = time.Minute
	// No driver heals faults here: uploads get enough attempts that a
	// checkpoint fails rarely, since a failure during a paimon sync phase
	// fails the job over.
	e.minAttempts = 6
	e.logf("seed %d (real system): backend %s, %d events over %d keys, maxP %d, retain %d, concurrent %d",
		e.cfg.Seed, e.backend, len(e.stream.events), e.keys, e.maxP, e.retain, e.maxConcurrent)
	return e.result(e.driveReal(), 0)
}

// realWait bounds each wait of the real system's driver for a message: long,
// since a loaded machine (the race detector, parallel test binaries) slows
// everything, and a checkpoint may need its whole timeout to resolve.
const realWait = 3 * time.Minute

func (e *env) driveReal() error {
	prog, err := actors.NewProbe(e.sys, "progress")
	if err != nil {
		return err
	}
	prog.SetWait(realWait)
	e.progressTo = prog.PID()
	p := e.firstParallelism()
	j, err := e.startWithRetries(p)
	if err != nil {
		return err
	}
	failovers := 0
	waitFor := func(n int) error {
		for e.ext.committed() < n {
			if _, err := prog.Next(); err != nil {
				return fmt.Errorf("liveness: %d of %d outputs committed: %w", e.ext.committed(), n, err)
			}
			if err, _ := e.check.failed(); err != nil {
				return err
			}
			if ferr := e.takeFailure(j.run); ferr != nil {
				if failovers++; failovers > maxHealedFailovers {
					return fmt.Errorf("liveness: %d failovers, the last: %w", failovers, ferr)
				}
				e.logf("operator failed: %v", ferr)
				e.crashJob(j)
				if j, err = e.startWithRetries(j.p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := waitFor(len(e.stream.events) / 2); err != nil {
		return err
	}
	// A clean stop halfway, then a restore at the next parallelism.
	if err := e.quiet(j); err != nil {
		return err
	}
	e.crashJob(j)
	if j, err = e.startWithRetries(e.nextParallelism(p)); err != nil {
		return err
	}
	if err := waitFor(len(e.stream.events)); err != nil {
		return err
	}
	e.logf("all %d outputs committed", len(e.stream.events))
	return e.finish(j)
}

// quiet stops triggering and waits until no checkpoint is pending and no
// actor has work in flight.
func (e *env) quiet(j *job) error {
	e.sys.Request(j.jobAc, &stopTriggers{}, j.probe.PID())
	if _, err := actors.Expect[*jobIdle](j.probe); err != nil {
		return fmt.Errorf("liveness: pending checkpoints never finished: %w", err)
	}
	_, err := e.settle(j)
	return err
}

// stopActors stops the actors of a run on the real system and waits until
// they are gone.
func (e *env) stopActors(pids []*actor.PID) {
	e.stoppers++
	w, err := actors.NewProbe(e.sys, fmt.Sprintf("stopper-%d", e.stoppers))
	if err != nil {
		return
	}
	w.SetWait(realWait)
	for _, pid := range pids {
		w.Watch(pid)
		e.sys.Stop(pid)
	}
	for range pids {
		if _, err := actors.Expect[*actor.Terminated](w); err != nil {
			break
		}
	}
	e.sys.Stop(w.PID())
}
