package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

func init() {
	register(&command{
		path:    "run",
		usage:   "[--query q4] [--events 200000] [--backend paimon|pebble|memory] [--parallelism 2] [--checkpoint-interval 500ms] [--overlap-checkpoints=true] [--dir ./lakestate-data] [--restore latest] [--verify]",
		summary: "run a Nexmark query to completion (or resume it from its latest checkpoint) and write its output",
		run:     runJob,
	})
}

// runSplits is the number of generator splits of a run. Splits are fixed
// across restores (split s is read by source subtask s mod p), so it does
// not follow the parallelism.
const runSplits = 4

func runJob(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	query := fs.String("query", "q4", "Nexmark query: q4, q9, q18 or q20")
	events := fs.Int64("events", 200_000, "number of events to generate")
	backend := fs.String("backend", "paimon", "state backend: paimon, pebble or memory")
	parallelism := fs.Int("parallelism", 2, "parallelism of every operator")
	interval := fs.Duration("checkpoint-interval", 500*time.Millisecond, "time between checkpoints (0: only the final one)")
	overlap := fs.Bool("overlap-checkpoints", true, "start the next checkpoint once the one in flight ended its sync phase everywhere; false: once it completed (a paimon store's commit and rounds then stretch the interval, and its memory with it)")
	dir := fs.String("dir", "./lakestate-data", "directory for state, checkpoints and output")
	restore := fs.String("restore", "", `"latest": resume from the latest completed checkpoint in --dir`)
	verify := fs.Bool("verify", false, "compare the output with the reference implementation")
	seed := fs.Uint64("seed", 1, "generator seed")
	killAfter := fs.Int64("kill-after-events", 0, "stop reading after this many events, checkpoint, and end the run as a crash would (to try --restore)")
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
	be, err := runtime.OpenBackend(*backend)
	if err != nil {
		return usagef("%v", err)
	}
	if *events <= 0 || *parallelism <= 0 {
		return usagef("--events and --parallelism must be positive")
	}
	if *restore != "" && *restore != "latest" {
		return usagef(`--restore takes "latest"`)
	}
	if *killAfter < 0 || *killAfter >= *events {
		return usagef("--kill-after-events must be below --events")
	}

	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = *events
	cfg.Seed = *seed
	jobDir := filepath.Join(*dir, q.Name)
	input := runInput{Events: *events, Seed: *seed, Splits: runSplits}
	if *restore == "" {
		// A fresh run starts over: no checkpoint of an earlier run is
		// restored or kept, and its output goes.
		if err := os.RemoveAll(jobDir); err != nil {
			return err
		}
		if err := input.save(jobDir); err != nil {
			return err
		}
	} else if err := input.check(jobDir); err != nil {
		return err
	}
	log, err := runtime.OpenTxnLog(filepath.Join(jobDir, "output"))
	if err != nil {
		return err
	}
	src := &runSource{Source: &jobs.Source{Config: cfg, NumSplits: runSplits}}
	src.limit.Store(*events)
	if *killAfter > 0 {
		src.limit.Store(*killAfter / runSplits)
	}
	g := runtime.NewGraph()
	q.Build(g.Source("nexmark", src)).Sink("sink", log)
	if err := g.Err(); err != nil {
		return err
	}
	sys := actors.NewSystem(actors.Options{Seed: *seed})
	defer sys.Close()

	start := time.Now()
	run, err := runtime.Start(sys, g, runtime.Options{
		Name:               q.Name,
		Parallelism:        *parallelism,
		Backend:            be,
		Dir:                *dir,
		RestoreLatest:      *restore == "latest",
		CheckpointInterval: *interval,
		OverlapCheckpoints: *overlap,
	})
	if err != nil {
		return err
	}
	progress := newProgress(os.Stderr, fmt.Sprintf("%s on %s", q.Name, *backend))
	stopTicker := progress.tick(func() string {
		return fmt.Sprintf("%d events, %d checkpoints", src.read.Load(), run.Completed())
	})
	if *killAfter > 0 {
		err = killAfterCheckpoint(run)
	} else {
		err = run.Wait()
	}
	stopTicker()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	read := src.read.Load()
	stats := run.Stats()
	fmt.Fprintf(stdout, "query        %s\n", q.Name)
	fmt.Fprintf(stdout, "backend      %s (parallelism %d)\n", *backend, *parallelism)
	if run.Restored() != 0 {
		fmt.Fprintf(stdout, "restored     checkpoint %d\n", run.Restored())
	}
	fmt.Fprintf(stdout, "events       %d in %.2fs (%.0f events/s)\n", read, elapsed.Seconds(), float64(read)/elapsed.Seconds())
	fmt.Fprintf(stdout, "checkpoints  %d completed, %d aborted, %s uploaded, sync p50 %v p99 %v\n", stats.Completed, stats.Aborted,
		byteSize(stats.UploadedBytes), syncQuantile(stats.Syncs, 0.50), syncQuantile(stats.Syncs, 0.99))
	for i, cause := range stats.AbortCauses {
		if i == 3 {
			fmt.Fprintf(stdout, "aborted      and %d more\n", len(stats.AbortCauses)-i)
			break
		}
		fmt.Fprintf(stdout, "aborted      %v\n", cause)
	}
	if stats.Stalls > 0 {
		fmt.Fprintf(stdout, "backpressure sources held %d times (state maintenance behind)\n", stats.Stalls)
	}
	if *killAfter > 0 {
		fmt.Fprintf(stdout, "killed       after checkpoint %d; resume with --restore latest\n", run.Completed())
		return nil
	}

	table := runtime.NewChangelogTable()
	if _, err := log.Replay(table); err != nil {
		return err
	}
	rows, err := table.Rows()
	if err != nil {
		return err
	}
	result := q.Output(rows)
	outPath := filepath.Join(*dir, q.Name+".out")
	if err := writeOutput(outPath, result); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "output       %d rows in %s (digest %s)\n", result.Len(), outPath, nexmark.Digest(result)[:16])
	if *verify {
		want, err := referenceOutput(q.Name, cfg, runSplits)
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

// killAfterCheckpoint waits until the sources have read what they may,
// takes a checkpoint and kills the run.
func killAfterCheckpoint(run *runtime.Run) error {
	if err := run.AwaitSourcesIdle(); err != nil {
		return err
	}
	if _, err := run.Checkpoint(); err != nil {
		return err
	}
	return run.Kill()
}

func writeOutput(path string, result nexmark.Output) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := nexmark.WriteText(f, result); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncQuantile is the q-quantile of ds (nearest rank), rounded for display.
func syncQuantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(100 * time.Microsecond)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
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

// runInput is what a run's input depends on. A resumed run must read the
// same input as the run it resumes, or its source offsets would point into
// other events; it is kept in the job's directory.
type runInput struct {
	Events int64  `json:"events"`
	Seed   uint64 `json:"seed"`
	Splits int    `json:"splits"`
}

const runInputFile = "input.json"

func (in runInput) save(jobDir string) error {
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(jobDir, runInputFile), b, 0o644)
}

// check refuses to resume a run of other input.
func (in runInput) check(jobDir string) error {
	name := filepath.Join(jobDir, runInputFile)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("nothing to resume in %s: no earlier run of this query", jobDir)
	}
	if err != nil {
		return err
	}
	var was runInput
	if err := json.Unmarshal(b, &was); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if was != in {
		return usagef("--restore resumes a run of --events %d --seed %d (%d splits); this one asks for --events %d --seed %d",
			was.Events, was.Seed, was.Splits, in.Events, in.Seed)
	}
	return nil
}

// runSource counts the events the run reads and holds every split at an
// offset limit (the whole input unless the run is to be killed early).
type runSource struct {
	runtime.Source
	limit atomic.Int64
	read  atomic.Int64
}

func (s *runSource) Open(split int, offset int64, uses []runtime.OutputUse) (runtime.SplitReader, error) {
	r, err := s.Source.Open(split, offset, uses)
	if err != nil {
		return nil, err
	}
	return &runReader{SplitReader: r, src: s}, nil
}

type runReader struct {
	runtime.SplitReader
	src *runSource
}

func (r *runReader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	left := r.src.limit.Load() - r.Offset()
	if left <= 0 {
		return runtime.ReadIdle, nil
	}
	before := r.Offset()
	st, err := r.SplitReader.Read(int(min(int64(n), left)), emit)
	r.src.read.Add(r.Offset() - before)
	return st, err
}
