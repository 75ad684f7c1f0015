package jobs_test

import (
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/nexmark/jobs"
	"github.com/lakestate/lakestate/runtime"
)

// BenchmarkQuery runs every query over 200K events on the memory backend at
// parallelism 1 and 2, with the final checkpoint only (the memory backend
// serializes its whole state at every checkpoint), and reports events/s and
// the heap allocations per event (objects and bytes, over the whole process:
// source, operators, stores, actors).
func BenchmarkQuery(b *testing.B) {
	const events = 200_000
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = events
	cfg.BaseTime = nexmark.DefaultBaseTime
	for _, q := range jobs.Queries() {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/memory/p%d", q.Name, p), func(b *testing.B) {
				sys := actors.NewSystem(actors.Options{})
				defer sys.Close()
				var before, after goruntime.MemStats
				goruntime.ReadMemStats(&before)
				start := time.Now()
				for range b.N {
					g, err := jobs.Graph(q, cfg, 2, runtime.NewChangelogTable())
					if err != nil {
						b.Fatal(err)
					}
					run, err := runtime.Start(sys, g, runtime.Options{Name: q.Name, Parallelism: p})
					if err != nil {
						b.Fatal(err)
					}
					if err := run.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				elapsed := time.Since(start)
				goruntime.ReadMemStats(&after)
				n := float64(events * b.N)
				b.ReportMetric(n/elapsed.Seconds(), "events/s")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/event")
			})
		}
	}
}
