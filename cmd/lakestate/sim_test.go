package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

var testFaults = []string{"crash-process", "upload-fail", "timeout", "decline"}

// fakeEngine stands in for the simulation: a seed divisible by 5 fails when
// crash-process is among its faults and its faulty phase lasts at least 700
// steps, so the shrunk failure is exactly --steps 700 --faults crash-process.
func fakeEngine() simEngine {
	return simEngine{faults: testFaults, steps: 5000, run: func(c seedConfig) seedResult {
		h := fnv.New64a()
		fmt.Fprintf(h, "%+v", c)
		r := seedResult{OK: true, TraceHash: h.Sum64(), Backend: "memory", Steps: uint64(c.Steps), Faults: map[string]int{},
			Checkpoints: 3, Trace: []string{fmt.Sprintf("step 1: start seed %d", c.Seed)}}
		for i, f := range c.Faults {
			r.Faults[f] = int(c.Seed+uint64(i)) % 3
		}
		if c.Seed%5 == 0 && slices.Contains(c.Faults, "crash-process") && c.Steps >= 700 {
			r.OK, r.Err, r.Step = false, errors.New("checker: output differs"), 42
			r.Trace = append(r.Trace, "step 42: output differs")
		}
		return r
	}}
}

func TestSimSweepReportsFailuresWithReplayAndShrunkTrace(t *testing.T) {
	var out bytes.Buffer
	err := runSim([]string{"--seeds", "10", "--parallel", "3"}, &out, fakeEngine())
	if err == nil || err.Error() != "2 of 10 seeds failed" {
		t.Fatalf("err = %v, want 2 of 10 seeds failed", err)
	}
	text := out.String()
	var seeds []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "seed ") {
			seeds = append(seeds, strings.Fields(l)[1])
		}
	}
	if want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}; !slices.Equal(seeds, want) {
		t.Fatalf("seed lines %v, want one per seed in order\n%s", seeds, text)
	}
	for _, want := range []string{
		"seed 5 FAIL hash=",
		"  error at step 42: checker: output differs\n",
		"  replay: lakestate sim --seed 5 --steps 5000 --faults crash-process,upload-fail,timeout,decline\n",
		"  shrunk (", "): lakestate sim --seed 5 --steps 700 --faults crash-process\n",
		"    step 42: output differs\n",
		"10 seeds: 8 passed, 2 failed (seeds 5 10); ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\r") {
		t.Errorf("a progress bar was drawn on a non-terminal:\n%q", text)
	}
}

// The replay line, run again, is the same run.
func TestSimReplayCommandRoundTrips(t *testing.T) {
	eng := fakeEngine()
	opts, err := parseSimFlags([]string{"--seed", "5", "--faults", "timeout,crash-process", "--steps", "900", "--events", "300", "--plant", "two-compactors", "--backends", "paimon"}, eng)
	if err != nil {
		t.Fatal(err)
	}
	cfg := opts.config(opts.first)
	line := replayCommand(cfg)
	args := strings.Fields(strings.TrimPrefix(line, "lakestate sim "))
	again, err := parseSimFlags(args, eng)
	if err != nil {
		t.Fatalf("replay %q: %v", line, err)
	}
	if got := again.config(again.first); fmt.Sprint(got) != fmt.Sprint(cfg) {
		t.Fatalf("replay %q parses to %+v, want %+v", line, got, cfg)
	}
	none, err := parseSimFlags([]string{"--faults", "none"}, eng)
	if err != nil {
		t.Fatal(err)
	}
	c := none.config(1)
	if c.Faults == nil || len(c.Faults) != 0 || !strings.Contains(replayCommand(c), "--faults none") {
		t.Fatalf("--faults none: %+v, %q", c, replayCommand(c))
	}
}

func TestSimJSONLines(t *testing.T) {
	var out bytes.Buffer
	if err := runSim([]string{"--seeds", "5", "--seed", "3", "--json", "--shrink=false"}, &out, fakeEngine()); err == nil {
		t.Fatal("a failing sweep exited 0")
	}
	sc := bufio.NewScanner(&out)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 5 seeds and a summary", len(lines))
	}
	if f := lines[2]; f["seed"] != 5.0 || f["ok"] != false || !strings.HasPrefix(f["replay"].(string), "lakestate sim --seed 5 ") || f["shrunk"] != nil {
		t.Fatalf("failing seed: %v", f)
	}
	if s := lines[5]; s["seeds"] != 5.0 || s["passed"] != 4.0 || fmt.Sprint(s["failed"]) != "[5]" {
		t.Fatalf("summary: %v", s)
	}
}

// Output follows seed order even when a later seed finishes first.
func TestSimOutputInSeedOrder(t *testing.T) {
	second := make(chan struct{})
	eng := fakeEngine()
	run := eng.run
	eng.run = func(c seedConfig) seedResult {
		switch c.Seed {
		case 1:
			<-second
		case 2:
			defer close(second)
		}
		return run(c)
	}
	var out bytes.Buffer
	if err := runSim([]string{"--seeds", "2", "--parallel", "2"}, &out, eng); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "seed 1 ok") || !strings.Contains(out.String(), "\nseed 2 ok") {
		t.Fatalf("out of order:\n%s", out.String())
	}
}

func TestSimPanicFailsOnlyItsSeed(t *testing.T) {
	eng := fakeEngine()
	run := eng.run
	eng.run = func(c seedConfig) seedResult {
		if c.Seed == 2 {
			panic("boom")
		}
		return run(c)
	}
	var out bytes.Buffer
	err := runSim([]string{"--seeds", "3", "--shrink=false"}, &out, eng)
	if err == nil || !strings.Contains(out.String(), "error at step 0: panic: boom") || !strings.Contains(out.String(), "seed 3 ok") {
		t.Fatalf("err %v\n%s", err, out.String())
	}
}

func TestSimPassesPlantedBugsToEveryRun(t *testing.T) {
	eng := fakeEngine()
	var planted [][]string
	eng.run = func(c seedConfig) seedResult {
		planted = append(planted, c.Plant)
		return seedResult{OK: true}
	}
	var out bytes.Buffer
	if err := runSim([]string{"--seeds", "2", "--plant", "two-compactors,skip-dv-round", "--parallel", "1"}, &out, eng); err != nil {
		t.Fatal(err)
	}
	want := []string{"skip-dv-round", "two-compactors"}
	if len(planted) != 2 || !slices.Equal(planted[0], want) || !slices.Equal(planted[1], want) {
		t.Fatalf("runs planted %v, want %v each", planted, want)
	}
}

func TestSimUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--faults", "meteor"}, {"--plant", "off-by-one"}, {"--seeds", "0"}, {"--steps", "-1"}, {"extra"},
	} {
		err := runSim(args, &bytes.Buffer{}, fakeEngine())
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
}

func TestShrinkKeepsAFailingConfiguration(t *testing.T) {
	eng := fakeEngine()
	cfg := seedConfig{Seed: 10, Steps: 5000, Faults: testFaults}
	first := eng.run(cfg)
	s := shrinkFailure(eng.run, cfg, first)
	if s.res.OK || s.cfg.Steps != 700 || !slices.Equal(s.cfg.Faults, []string{"crash-process"}) {
		t.Fatalf("shrunk to %+v (ok=%v)", s.cfg, s.res.OK)
	}
	if s.runs > len(testFaults)+1+14 {
		t.Fatalf("%d runs to shrink", s.runs)
	}
}

// The real simulation through the command: a few short seeds pass.
func TestSimCommandRunsTheSimulation(t *testing.T) {
	var out bytes.Buffer
	if err := runSim([]string{"--seeds", "2", "--steps", "3000"}, &out, defaultSimEngine); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "2 seeds: all passed") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestSimTwiceCatchesNondeterminism(t *testing.T) {
	eng := fakeEngine()
	run := eng.run
	var calls atomic.Int64
	eng.run = func(c seedConfig) seedResult {
		r := run(c)
		if c.Seed == 2 {
			r.TraceHash += uint64(calls.Add(1)) // differs every time
		}
		return r
	}
	var out bytes.Buffer
	err := runSim([]string{"--seeds", "3", "--twice"}, &out, eng)
	if err == nil || !strings.Contains(out.String(), "seed 2 FAIL") || !strings.Contains(out.String(), "nondeterministic: the same seed traced") ||
		strings.Contains(out.String(), "seed 1 FAIL") {
		t.Fatalf("err %v\n%s", err, out.String())
	}
}

func TestSimProgressBarWhenAsked(t *testing.T) {
	var out bytes.Buffer
	if err := runSim([]string{"--seeds", "4", "--progress", "--shrink=false", "--faults", "none"}, &out, fakeEngine()); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "\r\033[K[") || !strings.Contains(text, "] 4/4 seeds  0 failed") {
		t.Fatalf("no progress bar:\n%q", text)
	}
	// The bar is cleared before every line, so lines stay whole.
	if last := text[strings.LastIndex(text, "\n")+1:]; last != "" {
		t.Fatalf("output ends with %q after the summary", last)
	}
	if !strings.Contains(text, "\r\033[K4 seeds: all passed") {
		t.Fatalf("the bar is not cleared before the summary:\n%q", text)
	}
}
