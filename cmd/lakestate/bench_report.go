package main

import (
	"fmt"
	"io"
	"math"
	goruntime "runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// benchResult is a bench's figures: one cell per (query, backend) and the
// throughput ratios of the product backend against the others.
type benchResult struct {
	Config     benchConfig  `json:"config"`
	GOMAXPROCS int          `json:"gomaxprocs"`
	NumCPU     int          `json:"num_cpu"`
	Cells      []*benchCell `json:"results"`
	// Subject is the backend the ratios put over the others: paimon when
	// benched, else the first backend.
	Subject string       `json:"ratio_subject"`
	Ratios  []benchRatio `json:"ratios"`
}

// benchCell summarizes the runs of one query on one backend: medians of the
// per-run rates, checkpoint percentiles over every run's checkpoints,
// memory peaks over all runs.
type benchCell struct {
	Query            string  `json:"query"`
	Backend          string  `json:"backend"`
	EventsPerSec     float64 `json:"events_per_sec"`
	EventsPerCoreSec float64 `json:"events_per_core_sec"`
	Checkpoints      float64 `json:"checkpoints_per_run"`
	Aborted          int     `json:"aborted_checkpoints"`
	// Sync percentiles are over every subtask's sync phase of every run
	// (0 when no checkpoint was taken); uploads are per completed
	// checkpoint.
	SyncP50Millis     float64      `json:"sync_p50_ms"`
	SyncP99Millis     float64      `json:"sync_p99_ms"`
	UploadBytesPerChk float64      `json:"upload_bytes_per_checkpoint"`
	PeakHeapBytes     uint64       `json:"peak_heap_bytes"`
	PeakLiveBytes     uint64       `json:"peak_live_bytes"`
	PeakRSSBytes      uint64       `json:"peak_rss_bytes"`
	Digest            string       `json:"digest"`
	Runs              []runMeasure `json:"runs"`
}

// benchRatio is Subject's figure over Other's: per query, or the geometric
// mean over the queries (Query "geomean").
type benchRatio struct {
	Query      string  `json:"query"`
	Other      string  `json:"other"`
	Throughput float64 `json:"throughput"`
	PerCore    float64 `json:"per_core"`
}

func newBenchResult(cfg benchConfig) *benchResult {
	r := &benchResult{Config: cfg, GOMAXPROCS: goruntime.GOMAXPROCS(0), NumCPU: goruntime.NumCPU()}
	r.Subject = cfg.Backends[0]
	if slices.Contains(cfg.Backends, "paimon") {
		r.Subject = "paimon"
	}
	for _, q := range cfg.Queries {
		for _, b := range cfg.Backends {
			r.Cells = append(r.Cells, &benchCell{Query: q, Backend: b})
		}
	}
	return r
}

func (r *benchResult) cell(q, b string) *benchCell {
	for _, c := range r.Cells {
		if c.Query == q && c.Backend == b {
			return c
		}
	}
	return nil
}

// add records a run. Every backend must produce the same output for a
// query: a run whose output digest differs from an earlier run's fails the
// bench.
func (r *benchResult) add(q, b string, m runMeasure) error {
	for _, c := range r.Cells {
		if c.Query == q && c.Digest != "" && c.Digest != m.Digest {
			return fmt.Errorf("%s: output on %s (digest %.16s) differs from output on %s (digest %.16s)", q, b, m.Digest, c.Backend, c.Digest)
		}
	}
	c := r.cell(q, b)
	c.Runs = append(c.Runs, m)
	c.Digest = m.Digest
	return nil
}

func (r *benchResult) summarize() {
	for _, c := range r.Cells {
		c.summarize()
	}
	r.Ratios = nil
	for _, other := range r.Config.Backends {
		if other == r.Subject {
			continue
		}
		var tp, pc []float64
		for _, q := range r.Config.Queries {
			s, o := r.cell(q, r.Subject), r.cell(q, other)
			ratio := benchRatio{Query: q, Other: other,
				Throughput: s.EventsPerSec / o.EventsPerSec, PerCore: s.EventsPerCoreSec / o.EventsPerCoreSec}
			r.Ratios = append(r.Ratios, ratio)
			tp, pc = append(tp, ratio.Throughput), append(pc, ratio.PerCore)
		}
		r.Ratios = append(r.Ratios, benchRatio{Query: "geomean", Other: other, Throughput: geomean(tp), PerCore: geomean(pc)})
	}
}

func (c *benchCell) summarize() {
	var eps, epc, chk, sync []float64
	var uploaded float64
	completed := 0
	c.Aborted, c.PeakHeapBytes, c.PeakLiveBytes, c.PeakRSSBytes = 0, 0, 0, 0
	for _, m := range c.Runs {
		eps, epc = append(eps, m.EventsPerSec), append(epc, m.EventsPerCoreSec)
		chk = append(chk, float64(m.Checkpoints))
		c.Aborted += m.Aborted
		c.PeakHeapBytes = max(c.PeakHeapBytes, m.PeakHeapBytes)
		c.PeakLiveBytes = max(c.PeakLiveBytes, m.PeakLiveBytes)
		c.PeakRSSBytes = max(c.PeakRSSBytes, m.PeakRSSBytes)
		sync = append(sync, m.SyncMillis...)
		uploaded += float64(m.UploadedBytes)
		completed += m.Checkpoints
	}
	c.EventsPerSec, c.EventsPerCoreSec, c.Checkpoints = median(eps), median(epc), mean(chk)
	c.SyncP50Millis, c.SyncP99Millis, c.UploadBytesPerChk = 0, 0, 0
	if len(sync) > 0 {
		c.SyncP50Millis, c.SyncP99Millis = percentile(sync, 50), percentile(sync, 99)
	}
	if completed > 0 {
		c.UploadBytesPerChk = uploaded / float64(completed)
	}
}

func (r *benchResult) writeText(w io.Writer) error {
	cfg := r.Config
	interval := "final only"
	if cfg.Interval > 0 {
		interval = "every " + cfg.Interval.String()
	}
	fmt.Fprintf(w, "lakestate bench: %d events, parallelism %d, checkpoints %s, %d run(s) per cell (median), GOMAXPROCS %d\n\n",
		cfg.Events, cfg.Parallelism, interval, cfg.Runs, r.GOMAXPROCS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tbackend\tevents/s\tevents/s/core\tcheckpoints\tsync p50\tsync p99\tupload/chk\tpeak heap\tpeak live\tpeak rss\t")
	for _, c := range r.Cells {
		chk := fmt.Sprintf("%.1f", c.Checkpoints)
		if c.Aborted > 0 {
			chk += fmt.Sprintf(" (%d aborted)", c.Aborted)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Query, c.Backend,
			c.EventsPerSec, c.EventsPerCoreSec, chk,
			millis(c.SyncP50Millis), millis(c.SyncP99Millis), humanBytes(c.UploadBytesPerChk),
			humanBytes(float64(c.PeakHeapBytes)), humanBytes(float64(c.PeakLiveBytes)), humanBytes(float64(c.PeakRSSBytes)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Ratios) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nratios %s/other: throughput (per core)\n", r.Subject)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "query\t")
	var others []string
	for _, b := range cfg.Backends {
		if b != r.Subject {
			others = append(others, b)
			fmt.Fprintf(tw, "%s/%s\t", r.Subject, b)
		}
	}
	fmt.Fprintln(tw)
	for _, q := range append(slices.Clone(cfg.Queries), "geomean") {
		fmt.Fprintf(tw, "%s\t", q)
		for _, o := range others {
			for _, rt := range r.Ratios {
				if rt.Query == q && rt.Other == o {
					fmt.Fprintf(tw, "%.2fx (%.2fx)\t", rt.Throughput, rt.PerCore)
				}
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func millis(v float64) string {
	return (time.Duration(v * float64(time.Millisecond))).Round(10 * time.Microsecond).String()
}

func humanBytes(b float64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%.0fB", b)
	}
	exp := 0
	for b >= unit*unit && exp < 4 {
		b /= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", b/unit, "KMGTP"[exp])
}

func median(v []float64) float64 { return percentile(v, 50) }

// percentile is the nearest-rank p-th percentile; NaN of nothing.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func geomean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	logs := 0.0
	for _, x := range v {
		logs += math.Log(x)
	}
	return math.Exp(logs / float64(len(v)))
}
