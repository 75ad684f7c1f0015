package jobs_test

import (
	"sync/atomic"

	"github.com/lakestate/lakestate/runtime"
)

// gatedSource holds every split of a source at an offset the test moves, so
// that a run can be checkpointed and killed at chosen points of the input.
type gatedSource struct {
	runtime.Source
	limit atomic.Int64
}

func (g *gatedSource) Open(split int, offset int64, wanted []runtime.OutputUse) (runtime.SplitReader, error) {
	r, err := g.Source.Open(split, offset, wanted)
	if err != nil {
		return nil, err
	}
	return &gatedReader{SplitReader: r, gate: g}, nil
}

type gatedReader struct {
	runtime.SplitReader
	gate *gatedSource
}

func (r *gatedReader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	left := r.gate.limit.Load() - r.Offset()
	if left <= 0 {
		return runtime.ReadIdle, nil
	}
	return r.SplitReader.Read(int(min(int64(n), left)), emit)
}
