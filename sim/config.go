package sim

import (
	"io"
	"slices"

	"github.com/lakestate/lakestate/barrier"
)

// Fault kinds, by the names Config.Faults and Result.Faults use.
const (
	FaultCrashSubtask    = "crash-subtask"    // one keyed subtask crashes; the job fails over a little later
	FaultCrashProcess    = "crash-process"    // every actor crashes at once and unsynced local data is lost
	FaultTimeout         = "timeout"          // short checkpoint timeouts, timers fire while work is in flight
	FaultDecline         = "decline"          // a subtask declines a pending checkpoint
	FaultNotifyLost      = "notify-lost"      // a Complete or Aborted notification never arrives
	FaultNotifyLate      = "notify-late"      // a notification arrives late (and so out of order)
	FaultUploadFail      = "upload-fail"      // blob operations fail transiently before taking effect
	FaultUploadAmbiguous = "upload-ambiguous" // blob operations time out and may have taken effect
	FaultFsyncEIO        = "fsync-eio"        // a local fsync fails with EIO
	FaultENOSPC          = "enospc"           // local writes run out of space
	FaultRescale         = "rescale"          // restarts change the parallelism
)

// AllFaults lists every fault kind.
func AllFaults() []string {
	return []string{FaultCrashSubtask, FaultCrashProcess, FaultTimeout, FaultDecline, FaultNotifyLost, FaultNotifyLate,
		FaultUploadFail, FaultUploadAmbiguous, FaultFsyncEIO, FaultENOSPC, FaultRescale}
}

// Backends lists the backends whose checkpoints the workload runs on. Pebble
// is absent: it reads and writes through its own vfs.FS, not the table
// FileIO that the simulated filesystem implements, so it cannot run over it.
func Backends() []string { return []string{barrier.BackendMemory, barrier.BackendPaimon} }

// Config describes one run. Everything but Seed has a default; a seed and
// the same Config replay a run exactly.
type Config struct {
	Seed uint64
	// Steps is how many scheduler steps the faulty phase lasts (default
	// 20000). Then every fault heals and the job must finish.
	Steps int
	// Faults are the fault kinds to inject, by name: nil means AllFaults(),
	// an empty non-nil slice none.
	Faults []string
	// Backends are the backends the seed picks from (nil: memory, or
	// paimon for one seed in six).
	Backends []string
	// Events is the length of the source's stream (default by seed: 400 to
	// 1600 on memory, 80 to 300 on paimon).
	Events int
	// StepBytes, if set, is the maintenance sessions' shaping step size
	// (default by seed: the compaction package's default, 1 KiB or 4 KiB).
	// Small steps cut compactions by key range.
	StepBytes int64
	// TraceTo, if set, receives one line per scheduler step.
	TraceTo io.Writer
	// Dir, if set, runs the workload on the real actor system with its local
	// files under Dir instead of in the simulation.
	Dir string
	// Plant switches on planted bugs by name (internal/plant) for the run;
	// runs at the same time must plant the same set.
	Plant []string
}

// Result is the outcome of one run.
type Result struct {
	OK        bool
	Seed      uint64
	Backend   string
	TraceHash uint64         // the simulation's trace hash (0 on the real system)
	Faults    map[string]int // faults injected, per kind
	Steps     uint64         // scheduler steps run
	Err       error          // the first violation found
	Step      uint64         // the step at which Err was found
	// Trace is the run's driver events ("step N: ..."): restarts, rescales,
	// fault switches and checks, enough to follow a failure.
	Trace       []string
	Checkpoints int // checkpoints completed
	Restores    int // job restarts from a checkpoint
}

func (c Config) withDefaults() Config {
	if c.Steps <= 0 {
		c.Steps = 20000
	}
	if c.Faults == nil {
		c.Faults = AllFaults()
	}
	return c
}

func (c Config) has(fault string) bool { return slices.Contains(c.Faults, fault) }
