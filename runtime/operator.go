package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
)

// TaskID names one subtask of a job: the operator's name and the subtask's
// index.
type TaskID struct {
	Operator string
	Subtask  int
}

func (t TaskID) String() string { return fmt.Sprintf("%s.%d", t.Operator, t.Subtask) }

// Operator is the logic of one subtask of an operator. The runtime calls it
// from the subtask's actor, one call at a time, so it needs no locking and
// must not block: blocking work goes through OperatorContext.Submit.
//
// An operator may also implement WatermarkHandler, EndHandler, Snapshotter,
// CheckpointListener and MessageHandler.
type Operator interface {
	// Open registers the operator's states on ctx.Store; after a restore they
	// hold the restored rows.
	Open(ctx *OperatorContext) error
	// Process handles a batch of records of input. Records and their rows
	// stay valid after the call; the operator may keep the rows.
	Process(input int, recs []Record, out Emitter) error
}

// Emitter takes an operator's output records.
type Emitter interface {
	Emit(kind Change, row Row)
}

// WatermarkHandler is an operator that acts on event time.
type WatermarkHandler interface {
	// Watermark is called when the subtask's watermark (the minimum over its
	// input channels) advances to wm, before wm is forwarded downstream.
	Watermark(wm int64, out Emitter) error
}

// EndHandler is an operator that acts when its input ends.
type EndHandler interface {
	// EndOfInput is called once every input channel has ended, before the end
	// is forwarded downstream.
	EndOfInput(out Emitter) error
}

// Snapshotter is an operator with state outside its keyed store: source
// offsets, sink transactions. The bytes go into the checkpoint with the
// subtask's state.
type Snapshotter interface {
	// Snapshot returns the operator's extras at barrier n, as parts that
	// the checkpoint holds back to back (several buffers need no join).
	// The checkpoint writes them later, on another goroutine: the operator
	// must not change them afterwards.
	Snapshot(n int64) ([][]byte, error)
}

// CheckpointListener is an operator that acts on the outcome of checkpoints.
type CheckpointListener interface {
	CheckpointComplete(n int64) error
	CheckpointAborted(n int64) error
}

// MessageHandler receives the results of work an operator submitted.
type MessageHandler interface {
	Receive(msg any) error
}

// OperatorContext is what an operator subtask knows about its place in the
// job.
type OperatorContext struct {
	Task           TaskID
	Parallelism    int
	MaxParallelism int
	// KeyGroups is the range of key groups the subtask owns.
	KeyGroups keygroup.Range
	// Inputs is the schema of each input.
	Inputs []Schema
	// Store holds the subtask's keyed state; nil for an operator whose inputs
	// are not keyed.
	Store *subtask.Store
	// Restored holds, after a restore, the extras (see Snapshotter) of every
	// subtask the operator had in the restored checkpoint, indexed by its old
	// subtask index, like Flink's union list state: each new subtask picks
	// its share. RestoredID is that checkpoint; both are zero on a fresh
	// start.
	Restored   [][]byte
	RestoredID int64

	submit    func(work func() any)
	committed func(n int64)
}

// Submit runs blocking work on the system's executor; its return value comes
// back to the operator's Receive (see MessageHandler).
func (c *OperatorContext) Submit(work func() any) { c.submit(work) }
