package runtime

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
)

// The checkpoint seam: what an operator subtask asks of the checkpoint
// machinery and what it is told.
//
//	coordinator ──TriggerCheckpoint──▶ source subtasks (record offsets, inject barrier n)
//	subtask, barrier n aligned: forwards barrier n, then Checkpointer.SyncPhase(n)
//	checkpointer: flush the store, ..., hand off the upload; ──SyncDone(n)──▶ subtask (resumes)
//	             later ack or decline n to the coordinator
//	coordinator ──CheckpointComplete(n) / CheckpointAborted(n)──▶ every subtask

// TriggerCheckpoint asks a source subtask to start checkpoint ID: record its
// offsets and inject barrier ID into its outputs.
type TriggerCheckpoint struct{ ID int64 }

// SyncRequest asks for the sync phase of checkpoint ID of one subtask. The
// subtask forwarded barrier ID and processes nothing until SyncDone arrives.
type SyncRequest struct {
	ID        int64
	Task      TaskID
	KeyGroups keygroup.Range
	// Store is the subtask's keyed state, nil for a subtask without one. It is
	// lent to the checkpointer until SyncDone: the checkpointer flushes it
	// (and may run maintenance on its tables); the subtask does not touch it
	// meanwhile.
	Store *subtask.Store
	// Extras is the operator's state outside the store (Snapshotter).
	Extras []byte
	// ReplyTo receives *SyncDone.
	ReplyTo *actor.PID
}

// SyncDone ends the sync phase of checkpoint ID: the subtask resumes.
// Whether the checkpoint itself succeeds is told later.
type SyncDone struct{ ID int64 }

// CheckpointComplete tells a subtask that checkpoint ID completed: every
// subtask acknowledged it and its snapshot is stored. Sinks commit the
// output staged up to barrier ID.
type CheckpointComplete struct{ ID int64 }

// CheckpointAborted tells a subtask that checkpoint ID will never complete.
type CheckpointAborted struct {
	ID  int64
	Err error
}

// Checkpointer is the checkpoint machinery as one subtask sees it. The
// subtask calls it from its actor; it must not block, and answers through
// messages.
type Checkpointer interface {
	SyncPhase(req *SyncRequest)
}

// StateBackend makes the subtask stores of a job and turns their flushes into
// the handles a snapshot keeps.
type StateBackend interface {
	// Name names the backend in snapshots ("memory", "paimon", "pebble").
	Name() string
	// Open returns an empty backend for a subtask.
	Open(task TaskID) (subtask.Backend, error)
	// Handle is what a snapshot keeps of a flush.
	Handle(cp subtask.Checkpoint) ([]byte, error)
	// Restore returns a backend holding the state of a handle.
	Restore(task TaskID, handle []byte) (subtask.Backend, error)
}

// MemoryBackend keeps subtask state in memory and snapshots all of it at
// every checkpoint.
func MemoryBackend() StateBackend { return memoryBackend{} }

type memoryBackend struct{}

func (memoryBackend) Name() string { return "memory" }

func (memoryBackend) Open(TaskID) (subtask.Backend, error) { return subtask.NewMemory(), nil }

func (memoryBackend) Handle(cp subtask.Checkpoint) ([]byte, error) {
	if cp.State == nil {
		return nil, fmt.Errorf("checkpoint %d: memory flush without state", cp.ID)
	}
	return cp.State, nil
}

func (memoryBackend) Restore(task TaskID, handle []byte) (subtask.Backend, error) {
	return subtask.RestoreMemory(task.String(), handle)
}

// localCheckpointer runs a subtask's sync phase in place: it flushes the
// store, takes the backend's handle and acknowledges the checkpoint to the
// job's coordinator with the handle itself, which is what the coordinator
// stores. It stands in for the uploader until the checkpoint storage of
// barrier/ takes over.
type localCheckpointer struct {
	sys         *actors.System
	coordinator *actor.PID
	backend     StateBackend
	task        int // global task index
}

func (c *localCheckpointer) SyncPhase(req *SyncRequest) {
	snap := TaskSnapshot{KeyGroups: req.KeyGroups, Extras: req.Extras}
	var err error
	if req.Store != nil {
		var cp subtask.Checkpoint
		if cp, err = req.Store.Flush(req.ID); err == nil {
			snap.State, err = c.backend.Handle(cp)
		}
	}
	if err != nil {
		c.sys.Send(c.coordinator, &taskDecline{id: req.ID, task: c.task, err: fmt.Errorf("%s: %w", req.Task, err)})
	} else {
		c.sys.Send(c.coordinator, &taskAck{id: req.ID, task: c.task, snap: snap})
	}
	c.sys.Send(req.ReplyTo, &SyncDone{ID: req.ID})
}
