package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
)

// StateBackend is the kind of store that keeps the keyed state of a job's
// subtasks: memory, pebble or paimon. A checkpoint restores only onto the
// kind that wrote it.
type StateBackend interface {
	// Name is the backend's kind as checkpoints record it ("memory",
	// "pebble", "paimon").
	Name() string
	// open returns an empty backend for a subtask whose local files live
	// under dirs.
	open(dirs taskDirs) (subtask.Backend, error)
	// pebbleOptions and paimonOptions are what a restored store is opened
	// with; maintenance is the policy of a paimon store's table maintenance.
	pebbleOptions(dirs taskDirs) subtask.PebbleOptions
	paimonOptions() subtask.PaimonOptions
	maintenance() compaction.Config
}

// taskDirs are the local directories of one subtask of a run: state holds
// its store's files, work the checkpoint directories (chk-<n>/) its Store
// actor links files into while they upload.
type taskDirs struct{ state, work string }

// BackendNames lists the state backends OpenBackend knows, the default first.
func BackendNames() []string {
	return []string{barrier.BackendMemory, barrier.BackendPebble, barrier.BackendPaimon}
}

// OpenBackend returns the state backend of the given name with its default
// settings. Where its files go is the run's business (Options.Dir).
func OpenBackend(name string) (StateBackend, error) {
	switch name {
	case barrier.BackendMemory:
		return MemoryBackend(), nil
	case barrier.BackendPebble:
		return PebbleBackend(subtask.PebbleOptions{}), nil
	case barrier.BackendPaimon:
		return PaimonBackend(subtask.PaimonOptions{}, compaction.Config{}), nil
	}
	return nil, fmt.Errorf("unknown state backend %q (known: %v)", name, BackendNames())
}

// MemoryBackend keeps subtask state in Go maps and serializes all of it at
// every checkpoint: the baseline.
func MemoryBackend() StateBackend { return memoryBackend{} }

type memoryBackend struct {
	noPebble
	noPaimon
}

// noPebble and noPaimon are the options of the backends a kind is not.
type (
	noPebble struct{}
	noPaimon struct{}
)

func (noPebble) pebbleOptions(taskDirs) subtask.PebbleOptions { return subtask.PebbleOptions{} }
func (noPaimon) paimonOptions() subtask.PaimonOptions         { return subtask.PaimonOptions{} }
func (noPaimon) maintenance() compaction.Config               { return compaction.Config{} }

func (memoryBackend) Name() string                           { return barrier.BackendMemory }
func (memoryBackend) open(taskDirs) (subtask.Backend, error) { return subtask.NewMemory(), nil }

// PebbleBackend keeps subtask state in one Pebble database per subtask and
// checkpoints it by flush plus Pebble's hard-link checkpoint. The run sets
// o.CheckpointDir.
func PebbleBackend(o subtask.PebbleOptions) StateBackend { return pebbleBackend{o: o} }

type pebbleBackend struct {
	noPaimon
	o subtask.PebbleOptions
}

func (pebbleBackend) Name() string { return barrier.BackendPebble }

func (b pebbleBackend) open(d taskDirs) (subtask.Backend, error) {
	return subtask.OpenPebble(barrier.PebbleDBDir(d.state), b.pebbleOptions(d))
}

func (b pebbleBackend) pebbleOptions(d taskDirs) subtask.PebbleOptions {
	o := b.o
	o.CheckpointDir = barrier.PebbleCheckpointDirs(d.work)
	return o
}

// PaimonBackend keeps each state table of a subtask as a local Paimon
// primary-key table: the product. Each table gets a maintenance session
// (the barrier's deletion-vector round and shaping between barriers) with
// m as its policy; m.RetainSnapshots 0 keeps the default of 3.
func PaimonBackend(o subtask.PaimonOptions, m compaction.Config) StateBackend {
	if m.RetainSnapshots == 0 {
		m.RetainSnapshots = 3
	}
	return paimonBackend{o: o, m: m}
}

type paimonBackend struct {
	noPebble
	o subtask.PaimonOptions
	m compaction.Config
}

func (paimonBackend) Name() string { return barrier.BackendPaimon }

func (b paimonBackend) open(d taskDirs) (subtask.Backend, error) {
	return subtask.OpenPaimon(barrier.PaimonRoot(d.state), b.o)
}

func (b paimonBackend) paimonOptions() subtask.PaimonOptions { return b.o }
func (b paimonBackend) maintenance() compaction.Config       { return b.m }
