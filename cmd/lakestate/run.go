package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

func init() {
	register(&command{
		path:    "run",
		usage:   "[--query q4] [--events 200000] [--backend memory] [--parallelism 2] [--checkpoint-interval 500ms] [--dir ./lakestate-data] [--verify]",
		summary: "run a Nexmark query to completion and write its output",
		run:     runJob,
	})
}

// runBackends are the state backends the run command can use.
var runBackends = map[string]func(dir string) (runtime.StateBackend, error){
	"memory": func(string) (runtime.StateBackend, error) { return runtime.MemoryBackend(), nil },
}

func runJob(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	query := fs.String("query", "q4", "Nexmark query: q4, q9, q18 or q20")
	events := fs.Int64("events", 200_000, "number of events to generate")
	backend := fs.String("backend", "memory", "state backend")
	parallelism := fs.Int("parallelism", 2, "parallelism of every operator")
	interval := fs.Duration("checkpoint-interval", 500*time.Millisecond, "time between checkpoints (0: only the final one)")
	dir := fs.String("dir", "./lakestate-data", "directory for state and output")
	verify := fs.Bool("verify", false, "compare the output with the reference implementation")
	seed := fs.Uint64("seed", 1, "generator seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	q, ok := jobs.Lookup(*query)
	if !ok {
		return usagef("unknown query %q", *query)
	}
	mk, ok := runBackends[*backend]
	if !ok {
		return usagef("unknown or unavailable backend %q", *backend)
	}
	if *events <= 0 || *parallelism <= 0 {
		return usagef("--events and --parallelism must be positive")
	}
	be, err := mk(filepath.Join(*dir, "state"))
	if err != nil {
		return err
	}

	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = *events
	cfg.Seed = *seed
	out := runtime.NewChangelogTable()
	g, err := jobs.Graph(q, cfg, *parallelism, out)
	if err != nil {
		return err
	}
	sys := actors.NewSystem(actors.Options{Seed: *seed})
	defer sys.Close()

	start := time.Now()
	run, err := runtime.Start(sys, g, runtime.Options{
		Name:               q.Name,
		Parallelism:        *parallelism,
		Backend:            be,
		CheckpointInterval: *interval,
	})
	if err != nil {
		return err
	}
	progress := newProgress(os.Stderr, fmt.Sprintf("%s on %s", q.Name, *backend))
	stopTicker := progress.tick(func() string { return fmt.Sprintf("%d events", *events) })
	err = run.Wait()
	stopTicker()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)

	rows, err := out.Rows()
	if err != nil {
		return err
	}
	result := q.Output(rows)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	outPath := filepath.Join(*dir, q.Name+".out")
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	if err := nexmark.WriteText(f, result); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "query        %s\n", q.Name)
	fmt.Fprintf(stdout, "backend      %s (parallelism %d)\n", *backend, *parallelism)
	fmt.Fprintf(stdout, "events       %d in %.2fs (%.0f events/s)\n", *events, elapsed.Seconds(), float64(*events)/elapsed.Seconds())
	fmt.Fprintf(stdout, "checkpoints  %d completed\n", run.Completed())
	fmt.Fprintf(stdout, "output       %d rows in %s (digest %s)\n", result.Len(), outPath, nexmark.Digest(result)[:16])
	if *verify {
		want, err := referenceOutput(q.Name, cfg, *parallelism)
		if err != nil {
			return err
		}
		if d := nexmark.Diff(want, result); d != "" {
			return fmt.Errorf("output differs from the reference: %s", d)
		}
		fmt.Fprintf(stdout, "verified     output equals the reference implementation\n")
	}
	return nil
}

func referenceOutput(name string, cfg nexmark.Config, splits int) (nexmark.Output, error) {
	rq, ok := nexmark.LookupQuery(name)
	if !ok {
		return nil, fmt.Errorf("no reference implementation of %s", name)
	}
	events, err := nexmark.AllEvents(cfg, splits)
	if err != nil {
		return nil, err
	}
	return rq.Reference(events), nil
}
