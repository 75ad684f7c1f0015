package main

import (
	"fmt"
	"slices"

	"github.com/lakestate/lakestate/runtime"
)

// This file is bench's seam to runtime: which backends a run can use and
// what a run reports about its checkpoints.

// benchBackends maps a backend name to how a run is configured for it, in
// the default order of --backends. dir is the run's own directory.
var benchBackends = []struct {
	name      string
	configure func(dir string, o *runtime.Options) error
}{
	{"memory", func(_ string, o *runtime.Options) error { o.Backend = runtime.MemoryBackend(); return nil }},
}

func benchBackendNames() []string {
	var names []string
	for _, b := range benchBackends {
		names = append(names, b.name)
	}
	return names
}

func benchBackendKnown(name string) bool { return slices.Contains(benchBackendNames(), name) }

func configureBackend(name, dir string, o *runtime.Options) error {
	for _, b := range benchBackends {
		if b.name == name {
			return b.configure(dir, o)
		}
	}
	return fmt.Errorf("unknown backend %q", name)
}

// checkpointStat is what one completed checkpoint cost.
type checkpointStat struct {
	// SyncMillis is the longest sync phase over the subtasks.
	SyncMillis  float64
	UploadBytes int64
}

// checkpointStats returns the costs of a finished run's completed
// checkpoints, and false when the runtime does not report them.
func checkpointStats(*runtime.Run) ([]checkpointStat, bool) { return nil, false }
