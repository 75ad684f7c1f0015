package runtime

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
)

// The checkpoint seam: what an operator subtask asks of the checkpoint
// machinery (barrier/) and what it is told.
//
//	coordinator ──TriggerCheckpoint──▶ job ──▶ source subtasks (record offsets, inject barrier n)
//	subtask, barrier n aligned: forwards barrier n, then Checkpointer.SyncPhase(n) (store lent)
//	Store actor, memory/pebble: flush the store, list its files, hand off the upload;
//	             ──SyncDone(n)──▶ subtask (resumes)
//	Store actor, paimon: [wait until n-1's rounds are known] release n-1's frozen flush
//	             (reads move to its round snapshots), freeze the write buffers;
//	             ──SyncDone(n)──▶ subtask (resumes; reads live > frozen n > pinned snapshot)
//	             then, beside the subtask: commit n, maintenance rounds, listing, links,
//	             hand off the upload
//	Store actor: ──UploadStats(n)──▶ job (bytes handed to the uploader); later ack or
//	             decline n to the coordinator
//	coordinator ──Complete(n) / Aborted(n)──▶ job, every subtask and Store actor
//
// One checkpoint is in flight at a time; with Options.OverlapCheckpoints the
// job asks for n+1 once every task reported SyncDone(n), and a paimon
// store's Barrier(n+1) then waits for n's commit and rounds. A run finishes
// once its final checkpoint is committed by every sink and every Store
// actor drained (no removal of a chk-<n>/ directory outlives the run).

// extrasKey is the owner of a subtask's extras in a checkpoint.
const extrasKey = "operator"

// pieceSnapshotter is a Snapshotter whose extras end in pieces that stay
// the same over several checkpoints (a sink's transactions, until they are
// committed). A checkpoint stores each piece once, as a blob of its own,
// and the later ones reference it, so what a checkpoint writes does not
// grow with the pieces held; a restore gets head and pieces back to back,
// as Snapshot would have returned them.
type pieceSnapshotter interface {
	Snapshotter
	snapshotPieces(n int64) (head [][]byte, pieces []barrier.ExtraPiece, err error)
}

// SyncRequest asks for the sync phase of checkpoint ID of one subtask. The
// subtask forwarded barrier ID and processes nothing until *barrier.SyncDone
// arrives at ReplyTo.
type SyncRequest struct {
	ID        int64
	Task      TaskID
	KeyGroups keygroup.Range
	// Store is the subtask's keyed state, nil for a subtask without one. It is
	// lent to the checkpointer until SyncDone: the checkpointer flushes it
	// (a paimon store: freezes its write buffers, whose commit and
	// maintenance go on after SyncDone); the subtask does not touch it
	// meanwhile.
	Store *subtask.Store
	// Extras is the operator's state outside the store (Snapshotter), in
	// parts written back to back; they must not change afterwards.
	Extras [][]byte
	// Pieces continue Extras with pieces that later checkpoints may hold
	// again (pieceSnapshotter): each is stored once.
	Pieces []barrier.ExtraPiece
	// ReplyTo receives *barrier.SyncDone.
	ReplyTo *actor.PID
}

// Checkpointer is the checkpoint machinery as one subtask sees it. The
// subtask calls it from its actor; it must not block, and answers through
// messages.
type Checkpointer interface {
	SyncPhase(req *SyncRequest)
}

// storeCheckpointer hands a subtask's sync phase to its barrier Store actor,
// which flushes (or, for paimon, freezes) the store, answers SyncDone,
// decides what to upload and acknowledges the checkpoint to the coordinator
// once uploaded.
type storeCheckpointer struct {
	sys   *actors.System
	store *actor.PID
}

func (c *storeCheckpointer) SyncPhase(req *SyncRequest) {
	c.sys.Send(c.store, &barrier.Barrier{
		ID:      barrier.CheckpointID(req.ID),
		Kind:    barrier.KindCheckpoint,
		Store:   req.Store,
		Extras:  map[string]barrier.Extra{extrasKey: req.Extras},
		Pieces:  req.Pieces,
		ReplyTo: req.ReplyTo,
	})
}
