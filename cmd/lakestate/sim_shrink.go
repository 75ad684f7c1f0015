package main

import "slices"

// shrunkFailure is the smallest failing variant of a seed's run that
// shrinking found: the same seed with fewer fault kinds and fewer steps.
type shrunkFailure struct {
	cfg  seedConfig
	res  seedResult
	runs int // runs it took
}

// shrinkFailure looks for a smaller configuration of the failed run cfg
// that still fails, re-running the seed deterministically: first the fault
// kinds (those never injected go at once, then each other kind that the
// failure does not need), then the shortest faulty phase, by binary search
// over the step count. Any failure counts, so a shrunk run may fail
// differently; its error is reported with it.
func shrinkFailure(run func(seedConfig) seedResult, cfg seedConfig, failed seedResult) shrunkFailure {
	best := shrunkFailure{cfg: cfg, res: failed}
	fails := func(c seedConfig) bool {
		best.runs++
		r := run(c)
		if r.OK {
			return false
		}
		best.cfg, best.res = c, r
		return true
	}
	injected := slices.DeleteFunc(slices.Clone(cfg.Faults), func(f string) bool { return failed.Faults[f] == 0 })
	if len(injected) < len(cfg.Faults) {
		fails(withFaults(best.cfg, injected))
	}
	for i := 0; i < len(best.cfg.Faults); {
		if !fails(withFaults(best.cfg, slices.Delete(slices.Clone(best.cfg.Faults), i, i+1))) {
			i++
		}
	}
	lo, hi := 1, best.cfg.Steps // hi fails
	for lo < hi {
		mid := lo + (hi-lo)/2
		c := best.cfg
		c.Steps = mid
		if fails(c) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return best
}

func withFaults(c seedConfig, faults []string) seedConfig {
	c.Faults = faults
	return c
}
