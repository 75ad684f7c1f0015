package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/lakestate/lakestate/nexmark/jobs"
)

func init() {
	register(&command{
		path:    "bench",
		usage:   "[--queries q4,q9,q18,q20] [--backends memory,paimon,pebble] [--events 500000] [--runs 1] [--parallelism 1] [--checkpoint-interval 500ms] [--overlap-checkpoints=true] [--dir DIR] [--json] [--batch-size N] [--credits N] [--output memory|log] [--cpuprofile FILE] [--memprofile FILE] [--allocprofile FILE]",
		summary: "run queries on several state backends, alternating backends run by run, and compare them",
		run:     runBench,
	})
}

// benchConfig is what one bench invocation measures.
type benchConfig struct {
	Queries     []string      `json:"queries"`
	Backends    []string      `json:"backends"`
	Events      int64         `json:"events"`
	Runs        int           `json:"runs"`
	Parallelism int           `json:"parallelism"`
	Interval    time.Duration `json:"checkpoint_interval_ns"`
	Seed        uint64        `json:"seed"`
	// BatchSize and Credits override the runtime's defaults when positive.
	BatchSize int `json:"batch_size,omitempty"`
	Credits   int `json:"credits,omitempty"`
	// OutputLog sends the output to a transaction log on disk instead of
	// an in-memory table.
	OutputLog bool `json:"output_log,omitempty"`
	// Overlap lets the next checkpoint start once the one in flight ended
	// its sync phase everywhere (runtime.Options.OverlapCheckpoints).
	Overlap bool `json:"overlap_checkpoints,omitempty"`
	dir     string
	// memProfile names the heap profile file(s); "" writes none.
	memProfile string
	// allocProfile names the allocation profile file(s); "" writes none.
	allocProfile string
}

func runBench(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	queries := fs.String("queries", "q4,q9,q18,q20", "comma-separated Nexmark queries")
	backends := fs.String("backends", strings.Join(benchBackendNames(), ","), "comma-separated state backends")
	events := fs.Int64("events", 500_000, "events per run")
	runs := fs.Int("runs", 1, "repetitions of every (query, backend); backends alternate run by run")
	parallelism := fs.Int("parallelism", 1, "parallelism of every operator (and generator splits)")
	interval := fs.Duration("checkpoint-interval", 500*time.Millisecond, "time between checkpoints (0: only the final one)")
	overlap := fs.Bool("overlap-checkpoints", true, "start the next checkpoint once the one in flight ended its sync phase everywhere; false: once it completed (a paimon store's commit and rounds then stretch the interval, and its memory with it)")
	dir := fs.String("dir", "", "directory for state files (default: a temporary directory, removed at the end)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of all runs to this file")
	output := fs.String("output", "memory", `where the output goes during a run: "memory" (a table) or "log" (files, read back after the run: heap figures without the output)`)
	memProfile := fs.String("memprofile", "", "write each run's heap profile at its peak heap to this file (several runs: FILE-<query>-<backend>-<run>)")
	allocProfile := fs.String("allocprofile", "", "write, as each run's measured window ends, the allocation profile of the process so far to this file (several runs: FILE-<query>-<backend>-<run>); go tool pprof -sample_index=alloc_space, -base for one run's share")
	seed := fs.Uint64("seed", 1, "generator seed")
	batch := fs.Int("batch-size", 0, "rows a source reads per batch (0: the runtime's default)")
	credits := fs.Int("credits", 0, "data batches in flight per channel (0: the runtime's default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg := benchConfig{
		Queries: splitList(*queries), Backends: splitList(*backends), Events: *events, Runs: *runs,
		Parallelism: *parallelism, Interval: *interval, Seed: *seed, BatchSize: *batch, Credits: *credits, dir: *dir,
		OutputLog: *output == "log", Overlap: *overlap, memProfile: *memProfile,
		allocProfile: *allocProfile,
	}
	if *output != "memory" && *output != "log" {
		return usagef(`--output takes "memory" or "log"`)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.dir == "" {
		tmp, err := os.MkdirTemp("", "lakestate-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		cfg.dir = tmp
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := benchAll(cfg, newProgress(os.Stderr, "bench"), os.Stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.writeText(stdout)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (c *benchConfig) validate() error {
	if len(c.Queries) == 0 || len(c.Backends) == 0 {
		return usagef("--queries and --backends must name at least one each")
	}
	for _, q := range c.Queries {
		if _, ok := jobs.Lookup(q); !ok {
			return usagef("unknown query %q", q)
		}
	}
	seen := map[string]bool{}
	for _, b := range c.Backends {
		if seen[b] {
			return usagef("backend %q listed twice", b)
		}
		seen[b] = true
		if !benchBackendKnown(b) {
			return usagef("unknown backend %q (known: %s)", b, strings.Join(benchBackendNames(), ", "))
		}
	}
	if c.Events <= 0 || c.Runs <= 0 || c.Parallelism <= 0 || c.Interval < 0 || c.BatchSize < 0 || c.Credits < 0 {
		return usagef("--events, --runs and --parallelism must be positive, --checkpoint-interval, --batch-size and --credits not negative")
	}
	return nil
}

// memProfileFile is where run rep of query q on backend be writes its heap
// profile: the file named by --memprofile when the bench has one run, a
// name per run after it otherwise.
func (c *benchConfig) memProfileFile(q, be string, rep, total int) string {
	return runProfileFile(c.memProfile, q, be, rep, total)
}

// runProfiles names the profile files one run writes; "" writes none.
type runProfiles struct {
	heap   string // the heap at its peak (--memprofile)
	allocs string // allocations up to the end of the measured window (--allocprofile)
}

// profiles names the profile files of run rep of query q on backend be.
func (c *benchConfig) profiles(q, be string, rep, total int) runProfiles {
	return runProfiles{heap: c.memProfileFile(q, be, rep, total), allocs: runProfileFile(c.allocProfile, q, be, rep, total)}
}

// runProfileFile is the file named by a profile flag when the bench has one
// run, a name per run after it otherwise.
func runProfileFile(base, q, be string, rep, total int) string {
	if base == "" || total == 1 {
		return base
	}
	return fmt.Sprintf("%s-%s-%s-%d", base, q, be, rep+1)
}

// benchAll runs every (query, backend) Runs times and logs a line per run
// to log, so a long bench shows its figures as they come. Within a repetition the
// queries run in order and, per query, every backend once, starting with a
// different backend each repetition: machine noise (other load, thermal
// drift, a warming page cache) spreads over the backends alike.
func benchAll(cfg benchConfig, prog *progress, log io.Writer) (*benchResult, error) {
	res := newBenchResult(cfg)
	total := cfg.Runs * len(cfg.Queries) * len(cfg.Backends)
	done := 0
	for rep := range cfg.Runs {
		for _, qn := range cfg.Queries {
			q, _ := jobs.Lookup(qn)
			for k := range cfg.Backends {
				be := cfg.Backends[(k+rep)%len(cfg.Backends)]
				label := fmt.Sprintf("[%d/%d] %s on %s", done+1, total, qn, be)
				dir := filepath.Join(cfg.dir, fmt.Sprintf("%s-%s-%d", qn, be, rep))
				m, err := benchOne(q, be, cfg, dir, prog, label, cfg.profiles(qn, be, rep, total))
				if err != nil {
					return nil, fmt.Errorf("%s on %s (run %d): %w", qn, be, rep+1, err)
				}
				if err := os.RemoveAll(dir); err != nil {
					return nil, err
				}
				if err := res.add(qn, be, m); err != nil {
					return nil, err
				}
				fmt.Fprintf(log, "%s: %.0f events/s, %.0f per core, %d checkpoints, %.1fs\n",
					label, m.EventsPerSec, m.EventsPerCoreSec, m.Checkpoints, m.Seconds)
				done++
			}
		}
	}
	res.summarize()
	return res, nil
}
