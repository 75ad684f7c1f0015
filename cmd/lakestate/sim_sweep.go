package main

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"
)

// seedOutcome is one seed's run, and its shrunk failure if it failed.
type seedOutcome struct {
	cfg     seedConfig
	res     seedResult
	elapsed time.Duration
	shrunk  *shrunkFailure
}

// sweepSummary counts a sweep.
type sweepSummary struct {
	ran     uint64
	failed  []uint64
	faults  map[string]int
	elapsed time.Duration
}

// seedsPerMinute is the sweep's throughput.
func (s sweepSummary) seedsPerMinute() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.ran) / s.elapsed.Minutes()
}

// sweep runs the seeds, opts.parallel at a time (each run is independent
// and deterministic, so running them at once changes nothing but the wall
// time), and reports them in seed order.
func sweep(opts simOptions, eng simEngine, w io.Writer, tty bool) (sweepSummary, error) {
	start := time.Now()
	rep := newSimReporter(w, opts, tty || opts.progress)
	outcomes := make(chan seedOutcome)
	var g errgroup.Group
	g.SetLimit(opts.parallel)
	go func() {
		for i := range opts.seeds {
			cfg := opts.config(opts.first + i)
			g.Go(func() error {
				outcomes <- runSeed(eng, cfg, opts)
				return nil
			})
		}
		g.Wait()
		close(outcomes)
	}()
	sum := sweepSummary{faults: map[string]int{}}
	waiting := map[uint64]seedOutcome{}
	next := opts.first
	var werr error
	for o := range outcomes {
		waiting[o.cfg.Seed] = o
		rep.completed(!o.res.OK)
		for {
			o, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			sum.ran++
			if !o.res.OK {
				sum.failed = append(sum.failed, o.cfg.Seed)
			}
			for k, n := range o.res.Faults {
				sum.faults[k] += n
			}
			if err := rep.seed(o); err != nil && werr == nil {
				werr = err // keep draining: the runs are under way
			}
		}
	}
	sum.elapsed = time.Since(start)
	if err := rep.summary(sum); err != nil && werr == nil {
		werr = err
	}
	return sum, werr
}

// runSeed runs one seed (twice with opts.twice, which must trace the same
// steps), shrinking it if it fails. A panic in the run is that seed's
// failure, not the sweep's end.
func runSeed(eng simEngine, cfg seedConfig, opts simOptions) seedOutcome {
	start := time.Now()
	res := safeRun(eng.run, cfg)
	deterministic := true
	if opts.twice && res.OK {
		if again := safeRun(eng.run, cfg); again.TraceHash != res.TraceHash || !again.OK {
			deterministic = false
			res.OK = false
			res.Err = fmt.Errorf("nondeterministic: the same seed traced %016x, then %016x (ok=%v, err=%v)", res.TraceHash, again.TraceHash, again.OK, again.Err)
		}
	}
	o := seedOutcome{cfg: cfg, res: res, elapsed: time.Since(start)}
	// Shrinking re-runs the seed and trusts each verdict, which a
	// nondeterministic run does not earn.
	if !res.OK && opts.shrink && deterministic {
		s := shrinkFailure(func(c seedConfig) seedResult { return safeRun(eng.run, c) }, cfg, res)
		o.shrunk = &s
	}
	return o
}

func safeRun(run func(seedConfig) seedResult, cfg seedConfig) (res seedResult) {
	defer func() {
		if p := recover(); p != nil {
			res = seedResult{Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	res = run(cfg)
	if !res.OK && res.Err == nil {
		res.Err = fmt.Errorf("failed without an error")
	}
	return res
}
