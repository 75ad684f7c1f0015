package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// simReporter writes a sweep's lines: one per seed in seed order, the
// replay command and shrunk trace of a failure, a summary, and (on a
// terminal, or when asked) a progress bar below them.
type simReporter struct {
	w        io.Writer
	opts     simOptions
	bar      bool
	start    time.Time
	done     uint64 // seeds finished, in any order
	failed   int
	barDrawn bool
}

func newSimReporter(w io.Writer, opts simOptions, bar bool) *simReporter {
	return &simReporter{w: w, opts: opts, bar: bar, start: time.Now()}
}

// completed counts a finished seed and redraws the bar.
func (r *simReporter) completed(failed bool) {
	r.done++
	if failed {
		r.failed++
	}
	r.drawBar()
}

func (r *simReporter) drawBar() {
	if !r.bar {
		return
	}
	const width = 30
	total := r.opts.seeds
	filled := int(r.done * width / total)
	elapsed := time.Since(r.start)
	eta := "?"
	if r.done > 0 {
		eta = (time.Duration(float64(elapsed) / float64(r.done) * float64(total-r.done))).Round(time.Second).String()
	}
	perMin := float64(r.done) / max(elapsed.Minutes(), 1e-9)
	fmt.Fprintf(r.w, "\r\033[K[%s%s] %d/%d seeds  %d failed  %.0f seeds/min  eta %s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), r.done, total, r.failed, perMin, eta)
	r.barDrawn = true
}

func (r *simReporter) clearBar() {
	if r.barDrawn {
		fmt.Fprint(r.w, "\r\033[K")
		r.barDrawn = false
	}
}

// seedLine is the JSON form of one seed.
type seedLine struct {
	Seed        uint64         `json:"seed"`
	OK          bool           `json:"ok"`
	TraceHash   string         `json:"trace_hash"`
	Backend     string         `json:"backend,omitempty"`
	Steps       uint64         `json:"steps"`
	Checkpoints int            `json:"checkpoints"`
	Restores    int            `json:"restores"`
	Faults      map[string]int `json:"faults"`
	Seconds     float64        `json:"seconds"`
	Error       string         `json:"error,omitempty"`
	ErrorStep   uint64         `json:"error_step,omitempty"`
	Replay      string         `json:"replay,omitempty"`
	Trace       []string       `json:"trace,omitempty"`
	Shrunk      *shrunkLine    `json:"shrunk,omitempty"`
}

type shrunkLine struct {
	Replay    string   `json:"replay"`
	Runs      int      `json:"runs"`
	Error     string   `json:"error"`
	ErrorStep uint64   `json:"error_step"`
	TraceHash string   `json:"trace_hash"`
	Trace     []string `json:"trace"`
}

type summaryLine struct {
	Seeds          uint64         `json:"seeds"`
	Passed         uint64         `json:"passed"`
	Failed         []uint64       `json:"failed"`
	Seconds        float64        `json:"seconds"`
	SeedsPerMin    float64        `json:"seeds_per_min"`
	FaultsInjected map[string]int `json:"faults_injected"`
}

func (r *simReporter) seed(o seedOutcome) error {
	r.clearBar()
	defer r.drawBar()
	if r.opts.json {
		l := seedLine{Seed: o.cfg.Seed, OK: o.res.OK, TraceHash: hash(o.res.TraceHash), Backend: o.res.Backend,
			Steps: o.res.Steps, Checkpoints: o.res.Checkpoints, Restores: o.res.Restores, Faults: o.res.Faults,
			Seconds: o.elapsed.Seconds()}
		if l.Faults == nil {
			l.Faults = map[string]int{}
		}
		if !o.res.OK {
			l.Error, l.ErrorStep, l.Replay, l.Trace = o.res.Err.Error(), o.res.Step, replayCommand(o.cfg), o.res.Trace
		}
		if s := o.shrunk; s != nil {
			l.Shrunk = &shrunkLine{Replay: replayCommand(s.cfg), Runs: s.runs, Error: s.res.Err.Error(),
				ErrorStep: s.res.Step, TraceHash: hash(s.res.TraceHash), Trace: s.res.Trace}
		}
		return writeJSON(r.w, l)
	}
	verdict := "ok  "
	if !o.res.OK {
		verdict = "FAIL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d %s hash=%s", o.cfg.Seed, verdict, hash(o.res.TraceHash))
	if o.res.Backend != "" {
		fmt.Fprintf(&b, " backend=%s", o.res.Backend)
	}
	fmt.Fprintf(&b, " steps=%d checkpoints=%d restores=%d faults=%s (%.1fs)\n",
		o.res.Steps, o.res.Checkpoints, o.res.Restores, faultCounts(o.res.Faults), o.elapsed.Seconds())
	if !o.res.OK {
		fmt.Fprintf(&b, "  error at step %d: %v\n  replay: %s\n", o.res.Step, o.res.Err, replayCommand(o.cfg))
		if s := o.shrunk; s != nil {
			fmt.Fprintf(&b, "  shrunk (%d runs): %s\n  shrunk error at step %d: %v\n  shrunk trace (hash=%s):\n",
				s.runs, replayCommand(s.cfg), s.res.Step, s.res.Err, hash(s.res.TraceHash))
			writeTrace(&b, s.res.Trace)
		} else {
			b.WriteString("  trace:\n")
			writeTrace(&b, o.res.Trace)
		}
	}
	_, err := io.WriteString(r.w, b.String())
	return err
}

func (r *simReporter) summary(s sweepSummary) error {
	r.clearBar()
	if r.opts.json {
		failed := s.failed
		if failed == nil {
			failed = []uint64{}
		}
		return writeJSON(r.w, summaryLine{Seeds: s.ran, Passed: s.ran - uint64(len(s.failed)), Failed: failed,
			Seconds: s.elapsed.Seconds(), SeedsPerMin: s.seedsPerMinute(), FaultsInjected: s.faults})
	}
	verdict := "all passed"
	if n := len(s.failed); n > 0 {
		verdict = fmt.Sprintf("%d passed, ", s.ran-uint64(n))
		ids := make([]string, 0, min(n, 20))
		for _, id := range s.failed[:min(n, 20)] {
			ids = append(ids, fmt.Sprint(id))
		}
		if n > 20 {
			ids = append(ids, "…")
		}
		verdict += fmt.Sprintf("%d failed (seeds %s)", n, strings.Join(ids, " "))
	}
	_, err := fmt.Fprintf(r.w, "%d seeds: %s; %.1f seeds/min over %s; faults injected: %s\n",
		s.ran, verdict, s.seedsPerMinute(), s.elapsed.Round(time.Millisecond), faultCounts(s.faults))
	return err
}

func hash(h uint64) string { return fmt.Sprintf("%016x", h) }

// faultCounts renders injected faults as kind=count, by kind.
func faultCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

func writeTrace(b *strings.Builder, trace []string) {
	for _, l := range trace {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
