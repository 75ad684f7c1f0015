package main

import (
	"slices"
	"time"

	"github.com/lakestate/lakestate/runtime"
)

// This file is bench's seam to runtime: which backends a run can use and
// what a run reports about its checkpoints.

// benchBackendNames lists the backends, in the default order of --backends.
func benchBackendNames() []string { return runtime.BackendNames() }

func benchBackendKnown(name string) bool { return slices.Contains(benchBackendNames(), name) }

// configureBackend sets a run up for backend name; dir is the run's own
// directory, so that no run restores or sweeps another's files.
func configureBackend(name, dir string, o *runtime.Options) error {
	be, err := runtime.OpenBackend(name)
	if err != nil {
		return err
	}
	o.Backend, o.Dir = be, dir
	return nil
}

// checkpointFigures is what a finished run's checkpoints cost.
type checkpointFigures struct {
	Completed, Aborted int
	// Syncs is every subtask's sync phase of every checkpoint.
	Syncs         []time.Duration
	UploadedBytes int64
}

func checkpointStats(r *runtime.Run) checkpointFigures {
	s := r.Stats()
	return checkpointFigures{Completed: s.Completed, Aborted: s.Aborted, Syncs: s.Syncs, UploadedBytes: s.UploadedBytes}
}
