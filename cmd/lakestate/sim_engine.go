package main

import "github.com/lakestate/lakestate/sim"

// defaultSimEngine runs seeds of the simulation in this process.
var defaultSimEngine = simEngine{
	run: func(c seedConfig) seedResult {
		r := sim.Run(sim.Config{Seed: c.Seed, Steps: c.Steps, Events: c.Events, Faults: c.Faults, Backends: c.Backends, Plant: c.Plant})
		return seedResult{OK: r.OK, Backend: r.Backend, TraceHash: r.TraceHash, Faults: r.Faults, Steps: r.Steps,
			Err: r.Err, Step: r.Step, Trace: r.Trace, Checkpoints: r.Checkpoints, Restores: r.Restores}
	},
	faults: sim.AllFaults(),
	steps:  20000, // the simulation's default faulty phase
}
