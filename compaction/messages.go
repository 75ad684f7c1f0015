package compaction

import "fmt"

// Barrier asks for the minimal round of checkpoint Checkpoint, after the
// store's data commit SnapshotID. The sender gets a *RoundDone. The round's
// snapshot is pinned for the checkpoint until Unpin.
type Barrier struct {
	Checkpoint int64
	SnapshotID int64
}

// Trace implements actors.Traceable.
func (m *Barrier) Trace() string {
	return fmt.Sprintf("chk=%d snapshot=%d", m.Checkpoint, m.SnapshotID)
}

// RoundDone answers a Barrier. With Err set the round did not complete and
// level-0 data may be invisible to readers: the store must fail the
// checkpoint. SnapshotID is the snapshot to list for the checkpoint.
type RoundDone struct {
	Checkpoint   int64
	SnapshotID   int64
	Committed    bool
	Backpressure Backpressure
	Stats        Stats
	// WaitedJobs is how many maintenance jobs finished between the
	// barrier's arrival and its round: at most the one that was running.
	WaitedJobs int
	Err        error
}

// Trace implements actors.Traceable.
func (m *RoundDone) Trace() string {
	return fmt.Sprintf("chk=%d snapshot=%d committed=%t stalled=%t err=%v",
		m.Checkpoint, m.SnapshotID, m.Committed, m.Backpressure.Stalled, m.Err != nil)
}

// Pin keeps the files of a snapshot for a checkpoint in flight (a restored
// or an extra one; Barrier pins its own round). Pinning a checkpoint again
// moves its pin.
type Pin struct {
	Checkpoint int64
	SnapshotID int64
}

// Trace implements actors.Traceable.
func (m *Pin) Trace() string { return fmt.Sprintf("chk=%d snapshot=%d", m.Checkpoint, m.SnapshotID) }

// Unpin releases a checkpoint's pin once it completed, aborted or was
// subsumed. With UpTo it also releases every earlier checkpoint's pin (send
// it on Complete: a completed checkpoint subsumes the earlier ones, and their
// own notifications may never come).
type Unpin struct {
	Checkpoint int64
	UpTo       bool
}

// Trace implements actors.Traceable.
func (m *Unpin) Trace() string { return fmt.Sprintf("chk=%d upto=%t", m.Checkpoint, m.UpTo) }

// Kick asks for maintenance now: shaping, file drops, expiration. Barrier
// rounds kick on their own.
type Kick struct{}

// BackpressureChanged tells the store (Options.Notify) that the verdict
// changed: while Stalled, the store should slow its intake.
type BackpressureChanged struct {
	Backpressure Backpressure
}

// Trace implements actors.Traceable.
func (m *BackpressureChanged) Trace() string {
	return fmt.Sprintf("stalled=%t runs=%d", m.Backpressure.Stalled, m.Backpressure.SortedRuns)
}

// jobDone carries a job's result back from the executor.
type jobDone struct {
	result *JobResult
	// fence is the one of the maintainer that handed the job out: a
	// restarted maintainer ignores the jobs of the instance it replaced.
	fence *jobFence
}

// Trace implements actors.Traceable.
func (m *jobDone) Trace() string {
	return fmt.Sprintf("%s err=%v", m.result.job.Kind, m.result.err != nil)
}

// tick is the periodic maintenance timer.
type tick struct {
	token int
}
