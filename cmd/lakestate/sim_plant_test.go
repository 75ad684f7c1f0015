package main

import (
	"strings"
	"testing"

	"github.com/lakestate/lakestate/internal/plant"
)

// plantedCase is a planted bug, the runs that should expose it and what
// the checker that catches it says.
type plantedCase struct {
	bug       plant.Bug
	faults    []string
	signature string // in the error of the run that caught it
}

var plantedCases = []plantedCase{
	{plant.ReuseUnconfirmed, []string{"notify-lost"}, "reuse:"},
	{plant.AbortDeletesShared, []string{"decline", "upload-fail", "upload-ambiguous", "notify-lost"}, "nothing lost:"},
	{plant.SkipBarrierRound, []string{}, "exactly-once:"},
	{plant.TwoCompactors, []string{}, "one compactor:"},
}

// maxPlantedSeeds bounds the seeds a planted bug may take to be caught.
const maxPlantedSeeds = 50

// Each planted bug is caught by the simulation's checkers within
// maxPlantedSeeds seeds: the first seed that passes without the bug fails
// with it, and with the checker's own complaint.
func TestPlantedBugsAreCaught(t *testing.T) {
	eng := defaultSimEngine
	for _, pc := range plantedCases {
		t.Run(pc.bug.String(), func(t *testing.T) {
			cfg := seedConfig{Steps: 3000, Events: 150, Faults: pc.faults, Backends: []string{"paimon"}, Plant: []string{pc.bug.String()}}
			for seed := uint64(1); seed <= maxPlantedSeeds; seed++ {
				cfg.Seed = seed
				planted := safeRun(eng.run, cfg)
				if planted.OK || !strings.Contains(planted.Err.Error(), pc.signature) {
					continue
				}
				clean := cfg
				clean.Plant = nil
				if r := safeRun(eng.run, clean); !r.OK {
					t.Logf("seed %d fails without the planted bug too (%v); not counted", seed, r.Err)
					continue
				}
				t.Logf("caught at seed %d: %v\nreplay: %s", seed, planted.Err, replayCommand(cfg))
				return
			}
			t.Fatalf("%v not caught in %d seeds (%s)", pc.bug, maxPlantedSeeds, replayCommand(cfg))
		})
	}
}
