package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/lakestate/lakestate/internal/plant"
)

// seedConfig is one simulated run as the sim command describes it. With
// the same values a run replays exactly.
type seedConfig struct {
	Seed     uint64
	Steps    int      // steps of the faulty phase
	Events   int      // events the source emits; 0: chosen by seed
	Faults   []string // fault kinds; never nil here
	Backends []string // nil: the engine's choice by seed
	Plant    []string // planted bugs by name
}

// seedResult is the outcome of one run.
type seedResult struct {
	OK          bool
	Backend     string
	TraceHash   uint64
	Faults      map[string]int // injected, per kind
	Steps       uint64         // scheduler steps run
	Err         error
	Step        uint64   // the step at which Err was found
	Trace       []string // the driver's events, enough to follow a failure
	Checkpoints int
	Restores    int
}

// simEngine is what the sim command drives: the simulation, or a double in
// tests.
type simEngine struct {
	run    func(seedConfig) seedResult
	faults []string // every fault kind, in the order the engine names them
	steps  int      // the default length of the faulty phase
}

// simOptions are the parsed flags of one invocation.
type simOptions struct {
	first, seeds uint64
	steps        int
	events       int
	faults       []string
	backends     []string
	plant        []plant.Bug
	json         bool
	progress     bool
	shrink       bool
	twice        bool
	parallel     int
}

func init() {
	register(&command{
		path:    "sim",
		usage:   "[--seeds N] [--seed S] [--steps K] [--events E] [--faults LIST|all|none] [--backends LIST] [--plant LIST] [--json] [--progress] [--shrink=false] [--twice] [--parallel P]",
		summary: "run seeds of the deterministic simulation; a failing seed prints its replay command and a shrunk trace",
		run: func(args []string, stdout io.Writer) error {
			return runSim(args, stdout, defaultSimEngine)
		},
	})
}

func runSim(args []string, stdout io.Writer, eng simEngine) error {
	opts, err := parseSimFlags(args, eng)
	if err != nil {
		return err
	}
	sum, err := sweep(opts, eng, stdout, isTerminal(stdout))
	if err != nil {
		return err
	}
	if len(sum.failed) > 0 {
		return fmt.Errorf("%d of %d seeds failed", len(sum.failed), sum.ran)
	}
	return nil
}

func parseSimFlags(args []string, eng simEngine) (simOptions, error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	seeds := fs.Uint64("seeds", 1, "number of seeds to run")
	first := fs.Uint64("seed", 1, "first seed")
	steps := fs.Int("steps", eng.steps, "scheduler steps of the faulty phase; then faults heal and the job must finish")
	events := fs.Int("events", 0, "events the source emits (0: chosen by seed)")
	faults := fs.String("faults", "all", "fault kinds, comma-separated ("+strings.Join(eng.faults, ",")+"), all or none")
	backends := fs.String("backends", "", "backends a seed picks from, comma-separated (default: every supported one)")
	planted := fs.String("plant", "", "planted bugs, comma-separated ("+plantNames()+")")
	jsonOut := fs.Bool("json", false, "one JSON object per seed and one for the summary")
	progress := fs.Bool("progress", false, "draw the progress bar even when the output is not a terminal")
	shrink := fs.Bool("shrink", true, "shrink a failing seed to the fewest steps and fault kinds that still fail")
	twice := fs.Bool("twice", false, "run every seed twice; a different trace hash fails the seed (nondeterminism)")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "seeds run at once")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return simOptions{}, err
	}
	if len(pos) > 0 {
		return simOptions{}, usagef("unexpected argument %q", pos[0])
	}
	opts := simOptions{first: *first, seeds: *seeds, steps: *steps, events: *events, json: *jsonOut, progress: *progress, shrink: *shrink, twice: *twice, parallel: *parallel}
	switch {
	case opts.seeds == 0:
		return simOptions{}, usagef("--seeds must be positive")
	case opts.first+opts.seeds-1 < opts.first:
		return simOptions{}, usagef("--seed %d + --seeds %d overflows", opts.first, opts.seeds)
	case opts.steps <= 0:
		return simOptions{}, usagef("--steps must be positive")
	case opts.parallel <= 0:
		return simOptions{}, usagef("--parallel must be positive")
	case opts.events < 0:
		return simOptions{}, usagef("--events must not be negative")
	}
	switch *faults {
	case "all":
		opts.faults = slices.Clone(eng.faults)
	case "none", "":
		opts.faults = []string{}
	default:
		for _, f := range splitList(*faults) {
			if !slices.Contains(eng.faults, f) {
				return simOptions{}, usagef("unknown fault kind %q (known: %s)", f, strings.Join(eng.faults, ", "))
			}
			if !slices.Contains(opts.faults, f) {
				opts.faults = append(opts.faults, f)
			}
		}
	}
	opts.backends = splitList(*backends)
	if *planted != "" {
		if opts.plant, err = plant.ParseList(splitList(*planted)); err != nil {
			return simOptions{}, usagef("%v", err)
		}
	}
	return opts, nil
}

func (o simOptions) config(seed uint64) seedConfig {
	c := seedConfig{Seed: seed, Steps: o.steps, Events: o.events, Faults: o.faults, Backends: o.backends}
	for _, b := range o.plant {
		c.Plant = append(c.Plant, b.String())
	}
	return c
}

// replayCommand is the one line that runs c again.
func replayCommand(c seedConfig) string {
	faults := strings.Join(c.Faults, ",")
	if len(c.Faults) == 0 {
		faults = "none"
	}
	cmd := fmt.Sprintf("lakestate sim --seed %d --steps %d --faults %s", c.Seed, c.Steps, faults)
	if c.Events > 0 {
		cmd += fmt.Sprintf(" --events %d", c.Events)
	}
	if len(c.Backends) > 0 {
		cmd += " --backends " + strings.Join(c.Backends, ",")
	}
	if len(c.Plant) > 0 {
		cmd += " --plant " + strings.Join(c.Plant, ",")
	}
	return cmd
}

func plantNames() string {
	var names []string
	for _, b := range plant.All() {
		names = append(names, b.String())
	}
	return strings.Join(names, ",")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
