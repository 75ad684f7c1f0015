package barrier

import (
	"slices"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
)

// Two checkpoints write their metadata at once and the newer completes
// first, aborting the older: the older's files must outlive its metadata
// write, which may still land and name them, and its metadata must go
// first once the write returns.
func TestAbortWhileWritingHoldsDeletionsUntilTheWriteReturns(t *testing.T) {
	io := &recordingIO{}
	ops := []OperatorSpec{{ID: "op", Parallelism: 1, MaxParallelism: 8}}
	s, err := newCoordinatorState(io, newLedger(t, 1), "job", ops, 2)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(files ...FileRef) SubtaskState {
		st := ackOf(files...)
		st.Index, st.KeyGroups = 0, keygroup.RangeForSubtask(8, 1, 0)
		return st
	}
	id1, err := s.begin(KindCheckpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := s.begin(KindCheckpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.ack(id1, "op", sub(up(id1, "a", 10)))
	s.ack(id2, "op", sub(up(id2, "b", 10)))
	s.written(id2, MetadataBlobName(KindCheckpoint, id2), nil)
	if slices.Contains(io.deleted, blobOf(id1, "a")) {
		t.Fatalf("deleted %v while the metadata of checkpoint %d was still being written", io.deleted, id1)
	}
	s.written(id1, MetadataBlobName(KindCheckpoint, id1), nil)
	want := []string{MetadataBlobName(KindCheckpoint, id1), blobOf(id1, "a")}
	if !slices.Equal(io.deleted, want) {
		t.Fatalf("after the write returned, deleted %v, want %v", io.deleted, want)
	}
	if got := s.ledger.Retained(); !slices.Equal(got, []CheckpointID{id2}) {
		t.Fatalf("retained %v, want [%d]", got, id2)
	}
}
