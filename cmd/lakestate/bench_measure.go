package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

// runMeasure is what one run of a query on a backend measured.
type runMeasure struct {
	Seconds          float64 `json:"seconds"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	EventsPerSec     float64 `json:"events_per_sec"`
	EventsPerCoreSec float64 `json:"events_per_core_sec"`
	Checkpoints      int     `json:"checkpoints"`
	Aborted          int     `json:"aborted_checkpoints"`
	// SyncMillis is every subtask's sync phase of every checkpoint;
	// UploadedBytes sums what the checkpoints uploaded.
	SyncMillis    []float64 `json:"sync_ms"`
	UploadedBytes int64     `json:"uploaded_bytes"`
	PeakHeapBytes uint64    `json:"peak_heap_bytes"`
	// PeakLiveBytes is the largest heap a garbage collection left live:
	// what the run retains, without the garbage PeakHeapBytes includes.
	PeakLiveBytes uint64 `json:"peak_live_bytes"`
	PeakRSSBytes  uint64 `json:"peak_rss_bytes"`
	OutputRows    int    `json:"output_rows"`
	Digest        string `json:"digest"`
}

// benchOne runs query q once on backend be over cfg.Events events. It
// writes the profiles named: the heap profile taken when the heap reached
// its peak, and the allocation profile as the measured window ends (before
// the output is read back and digested, which allocates as much again).
func benchOne(q jobs.Query, be string, cfg benchConfig, dir string, prog *progress, label string, profiles runProfiles) (runMeasure, error) {
	memProfile := profiles.heap
	var m runMeasure
	opts := runtime.Options{Name: q.Name, Parallelism: cfg.Parallelism, CheckpointInterval: cfg.Interval,
		BatchSize: cfg.BatchSize, Credits: cfg.Credits, OverlapCheckpoints: cfg.Overlap}
	if err := configureBackend(be, dir, &opts); err != nil {
		return m, err
	}
	ncfg := nexmark.DefaultConfig()
	ncfg.NumEvents = cfg.Events
	ncfg.Seed = cfg.Seed
	src := &countingSource{Source: &jobs.Source{Config: ncfg, NumSplits: cfg.Parallelism}}
	out := runtime.NewChangelogTable()
	var sink runtime.Committer = out
	var outLog *runtime.TxnLog
	if cfg.OutputLog {
		// The output goes to files and is read back once the run is
		// measured: the heap figures are then the engine's and the state
		// backend's, without a copy of every output row.
		var err error
		if outLog, err = runtime.OpenTxnLog(filepath.Join(dir, "output")); err != nil {
			return m, err
		}
		sink = outLog
	}
	g := runtime.NewGraph()
	q.Build(g.Source("nexmark", src)).Sink("sink", sink)
	if err := g.Err(); err != nil {
		return m, err
	}

	sys := actors.NewSystem(actors.Options{Seed: cfg.Seed})
	defer sys.Close()
	mt := startMeter(memProfile != "")
	run, err := runtime.Start(sys, g, opts)
	if err != nil {
		mt.stop()
		return m, err
	}
	stopTicker := prog.tick(func() string { return label + "  " + progressBar(src.read.Load(), cfg.Events) })
	err = run.Wait()
	stopTicker()
	mt.stop()
	if err != nil {
		return m, err
	}
	if profiles.allocs != "" {
		if err := writeAllocProfile(profiles.allocs); err != nil {
			return m, err
		}
	}

	m.Seconds = mt.elapsed.Seconds()
	m.CPUSeconds = mt.cpu.Seconds()
	m.EventsPerSec = float64(cfg.Events) / m.Seconds
	if m.CPUSeconds > 0 {
		m.EventsPerCoreSec = float64(cfg.Events) / m.CPUSeconds
	}
	m.PeakHeapBytes, m.PeakLiveBytes, m.PeakRSSBytes = mt.peakHeap, mt.peakLive, mt.peakRSS
	if memProfile != "" {
		if err := os.WriteFile(memProfile, mt.peakProfile, 0o644); err != nil {
			return m, err
		}
	}
	ck := checkpointStats(run)
	m.Checkpoints, m.Aborted, m.UploadedBytes = ck.Completed, ck.Aborted, ck.UploadedBytes
	m.SyncMillis = make([]float64, len(ck.Syncs))
	for i, d := range ck.Syncs {
		m.SyncMillis[i] = float64(d) / float64(time.Millisecond)
	}
	if outLog != nil {
		if _, err := outLog.Replay(out); err != nil {
			return m, err
		}
	}
	rows, err := out.Rows()
	if err != nil {
		return m, err
	}
	result := q.Output(rows)
	m.OutputRows, m.Digest = result.Len(), nexmark.Digest(result)
	return m, nil
}

// countingSource counts the events its readers consume, for the progress
// bar.
type countingSource struct {
	runtime.Source
	read atomic.Int64
}

func (s *countingSource) Open(split int, offset int64, uses []runtime.OutputUse) (runtime.SplitReader, error) {
	r, err := s.Source.Open(split, offset, uses)
	if err != nil {
		return nil, err
	}
	return &countingReader{SplitReader: r, src: s, last: r.Offset()}, nil
}

type countingReader struct {
	runtime.SplitReader
	src  *countingSource
	last int64
}

func (r *countingReader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	st, err := r.SplitReader.Read(n, emit)
	off := r.Offset()
	r.src.read.Add(off - r.last)
	r.last = off
	return st, err
}

func progressBar(done, total int64) string {
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = math.Min(1, float64(done)/float64(total))
	}
	n := int(frac * width)
	return fmt.Sprintf("[%s%s] %3.0f%% %d/%d events", strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, done, total)
}

// meter measures one run of the process: wall time, CPU time of the whole
// process (getrusage), and the high-water marks of the Go heap (sampled),
// of the heap a collection left live and of the resident set (the kernel's,
// reset at the start where the kernel allows it).
type meter struct {
	start    time.Time
	ru       syscall.Rusage
	done     chan struct{}
	wg       sync.WaitGroup
	hwmReset bool
	// profile asks for a heap profile each time the heap grows a tenth past
	// the last profiled size; peakProfile is the last one taken.
	profile     bool
	profiledAt  uint64
	peakProfile []byte

	elapsed, cpu                time.Duration
	peakHeap, peakLive, peakRSS uint64
}

const (
	heapMetric = "/memory/classes/heap/objects:bytes"
	liveMetric = "/gc/heap/live:bytes"
)

func startMeter(profile bool) *meter {
	goruntime.GC()
	debug.FreeOSMemory()
	m := &meter{done: make(chan struct{}), profile: profile}
	// Writing 5 to clear_refs resets the resident set's high-water mark.
	m.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &m.ru)
	m.start = time.Now()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		sample := []metrics.Sample{{Name: heapMetric}, {Name: liveMetric}}
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				m.peakHeap = max(m.peakHeap, sample[0].Value.Uint64())
			}
			if sample[1].Value.Kind() == metrics.KindUint64 {
				m.peakLive = max(m.peakLive, sample[1].Value.Uint64())
			}
			if m.profile && m.peakHeap > m.profiledAt+m.profiledAt/10 {
				m.takeProfile()
			}
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// writeAllocProfile writes the allocation profile of the process so far to
// file.
func writeAllocProfile(file string) error {
	var b bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&b, 0); err != nil {
		return err
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// takeProfile keeps a heap profile of now. Its in-use figures are those of
// the last collection: what was live, not the garbage of the peak.
func (m *meter) takeProfile() {
	var b bytes.Buffer
	if pprof.Lookup("heap").WriteTo(&b, 0) == nil {
		m.peakProfile, m.profiledAt = b.Bytes(), m.peakHeap
	}
}

func (m *meter) stop() {
	m.elapsed = time.Since(m.start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	close(m.done)
	m.wg.Wait()
	m.cpu = time.Duration(syscall.TimevalToNsec(ru.Utime) - syscall.TimevalToNsec(m.ru.Utime) +
		syscall.TimevalToNsec(ru.Stime) - syscall.TimevalToNsec(m.ru.Stime))
	if hwm, ok := readVmHWM(); ok && m.hwmReset {
		m.peakRSS = hwm
	} else {
		m.peakRSS = uint64(ru.Maxrss) * 1024 // the process's lifetime peak
	}
}

// readVmHWM reads the resident set's high-water mark from /proc.
func readVmHWM() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}
