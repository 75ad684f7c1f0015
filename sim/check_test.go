package sim

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/sim/faultblob"
)

func wantFailure(t *testing.T, c *checker, prefix string) {
	t.Helper()
	err, _ := c.failed()
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("checker failure %v, want one starting %q", err, prefix)
	}
}

func TestCheckerFlagsPhaseOrder(t *testing.T) {
	step := func() uint64 { return 0 }
	c := newChecker(step)
	c.upload(1, opKeyed, 0, &barrier.Upload{ID: 3})
	wantFailure(t, c, "phase order: keyed/0 started the upload of checkpoint 3 before its sync phase")

	c = newChecker(step)
	c.barrierSent(1, opKeyed, 0, 3)
	c.upload(1, opKeyed, 0, &barrier.Upload{ID: 3})
	c.uploadDone(1, opKeyed, 0, &barrier.UploadDone{ID: 3, Err: barrier.ErrUploadCancelled})
	c.ack(1, opKeyed, 0, &barrier.Ack{ID: 3})
	wantFailure(t, c, "phase order: keyed/0 acknowledged checkpoint 3 before its upload succeeded")

	c = newChecker(step)
	c.startRun(1, 1, nil)
	c.completeDelivered(1, opSink, 0, &barrier.Complete{ID: 3, Kind: barrier.KindCheckpoint})
	wantFailure(t, c, "phase order: Complete(3) reached sink/0 before source/0 acknowledged")
}

// A placeholder may name only a file of a checkpoint confirmed to the
// store that acknowledges it.
func TestCheckerFlagsReuseOfUnconfirmedFiles(t *testing.T) {
	c := newChecker(func() uint64 { return 0 })
	c.startRun(1, 1, nil)
	key := barrier.FileKey{Backend: "b1", Table: "t", Path: "data-1.parquet"}
	c.meta[2] = &metaDoc{name: "chk-2/_metadata", keys: map[barrier.FileKey]bool{key: true}}
	ack := &barrier.Ack{ID: 3, State: barrier.SubtaskState{BackendID: "b1", KeyGroups: keygroup.RangeForSubtask(8, 1, 0),
		Tables: []barrier.TableState{{Name: "t", Files: []barrier.FileRef{{Path: "data-1.parquet", Size: 1}}}}}}
	c.barrierSent(1, opKeyed, 0, 3)
	c.upload(1, opKeyed, 0, &barrier.Upload{ID: 3})
	c.uploadDone(1, opKeyed, 0, &barrier.UploadDone{ID: 3})
	c.ack(1, opKeyed, 0, ack) // checkpoint 2 was acknowledged but never confirmed to the store
	wantFailure(t, c, "reuse: keyed/0 checkpoint 3 references b1/t/data-1.parquet")

	c = newChecker(func() uint64 { return 0 })
	c.startRun(1, 1, map[int]barrier.CheckpointID{0: 2}) // adopted by an aligned restore
	c.meta[2] = &metaDoc{name: "chk-2/_metadata", keys: map[barrier.FileKey]bool{key: true}}
	c.barrierSent(1, opKeyed, 0, 3)
	c.upload(1, opKeyed, 0, &barrier.Upload{ID: 3})
	c.uploadDone(1, opKeyed, 0, &barrier.UploadDone{ID: 3})
	c.ack(1, opKeyed, 0, ack)
	if err, _ := c.failed(); err != nil {
		t.Fatalf("reuse of the restored checkpoint's file flagged: %v", err)
	}
}

// Deleting a blob that a readable metadata names is caught; once the
// metadata is gone, the blob may go.
func TestCheckedBlobsFlagDeletionUnderReadableMetadata(t *testing.T) {
	e := &env{faults: map[string]int{}}
	e.check = newChecker(func() uint64 { return 0 })
	e.fblob = faultblob.New(rand.New(rand.NewPCG(1, 2)), faultblob.Faults{}, nil)
	b := &checkedBlobs{inner: e.fblob, env: e, docs: map[string]*metaDoc{}}
	ctx := context.Background()
	const file = "shared/chk-1/b1/t/data-1.parquet"
	if err := b.Put(ctx, file, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	m := &barrier.Metadata{ID: 1, Kind: barrier.KindCheckpoint, JobID: "j", Operators: []barrier.OperatorState{{
		ID: opKeyed, Parallelism: 1, MaxParallelism: 8, Subtasks: []barrier.SubtaskState{{
			KeyGroups: keygroup.RangeForSubtask(8, 1, 0), Backend: "paimon", BackendID: "b1",
			Tables: []barrier.TableState{{Name: "t", SnapshotID: 1, Files: []barrier.FileRef{{Path: "data-1.parquet", Size: 1, Blob: file, Uploaded: true}}}},
		}},
	}}}
	if _, err := barrier.WriteMetadata(ctx, b, m); err != nil {
		t.Fatal(err)
	}
	if err, _ := e.check.failed(); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, barrier.MetadataBlobName(barrier.KindCheckpoint, 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, file); err != nil {
		t.Fatal(err)
	}
	if err, _ := e.check.failed(); err != nil {
		t.Fatalf("deleting a file after its metadata: %v", err)
	}
	if err := b.Put(ctx, file, strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := barrier.WriteMetadata(ctx, b, m); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, file); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, e.check, "nothing lost: "+file+" deleted while the readable metadata chk-1/_metadata names it")
}
