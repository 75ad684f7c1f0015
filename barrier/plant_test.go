package barrier

import (
	"errors"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/internal/plant"
	"github.com/lakestate/lakestate/keygroup"
)

func withPlanted(t *testing.T, b plant.Bug) {
	t.Helper()
	release, err := plant.Enable([]plant.Bug{b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// The planted bug takes an acknowledged checkpoint as the reuse base before
// any confirmation; TestHistoryReusesOnlyConfirmedCheckpoints shows the
// correct rule.
func TestPlantedReuseOfUnconfirmedUpload(t *testing.T) {
	withPlanted(t, plant.ReuseUnconfirmed)
	h, err := NewHistory("b1")
	if err != nil {
		t.Fatal(err)
	}
	h.Acknowledged(mustDecide(t, h, 1, KindCheckpoint, map[string]int64{"1.sst": 10}))
	d2 := mustDecide(t, h, 2, KindCheckpoint, map[string]int64{"1.sst": 10, "2.sst": 20})
	if got := placeholders(d2); !slices.Equal(got, []string{"1.sst"}) {
		t.Fatalf("planted bug did not reuse the unconfirmed upload: placeholders %v", got)
	}
}

// recordingIO is a coordinatorIO that remembers the blobs it was asked to
// delete.
type recordingIO struct{ deleted []string }

func (r *recordingIO) trigger(CheckpointID, Kind, int64)         {}
func (r *recordingIO) write(*Metadata)                           {}
func (r *recordingIO) notifyComplete(CheckpointID, Kind, string) {}
func (r *recordingIO) notifyAborted(CheckpointID, error)         {}
func (r *recordingIO) execute(p Plan)                            { r.deleted = append(r.deleted, p.Delete...) }

// abortAfterReuse completes checkpoint 1 over two subtasks, then lets
// subtask 0 reference 1's file in checkpoint 2 and subtask 1 decline it. It
// returns the blobs deleted by the abort.
func abortAfterReuse(t *testing.T) []string {
	t.Helper()
	io := &recordingIO{}
	ops := []OperatorSpec{{ID: "op", Parallelism: 2, MaxParallelism: 8}}
	s, err := newCoordinatorState(io, newLedger(t, 1), "job", ops, 1)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(i int, files ...FileRef) SubtaskState {
		st := ackOf(files...)
		st.Index, st.KeyGroups = i, keygroup.RangeForSubtask(8, 2, i)
		return st
	}
	id, err := s.begin(KindCheckpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.ack(id, "op", sub(0, up(id, "a", 10)))
	s.ack(id, "op", sub(1))
	s.written(id, MetadataBlobName(KindCheckpoint, id), nil)
	if len(s.ledger.Retained()) != 1 {
		t.Fatalf("checkpoint %d did not complete", id)
	}
	io.deleted = nil
	id2, err := s.begin(KindCheckpoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.ack(id2, "op", sub(0, ref("a", 10), up(id2, "b", 5)))
	s.decline(id2, "op", 1, errors.New("upload failed"))
	return io.deleted
}

func TestAbortKeepsFilesOfCompletedCheckpoints(t *testing.T) {
	if got := abortAfterReuse(t); !slices.Equal(got, []string{blobOf(2, "b")}) {
		t.Fatalf("abort deleted %v, want only the aborted checkpoint's own upload", got)
	}
}

func TestPlantedAbortDeletesSharedFiles(t *testing.T) {
	withPlanted(t, plant.AbortDeletesShared)
	if got := abortAfterReuse(t); !slices.Contains(got, blobOf(1, "a")) {
		t.Fatalf("planted bug did not delete the completed checkpoint's file: deleted %v", got)
	}
}
