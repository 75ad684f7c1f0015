package barrier

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// blobOf is the blob checkpoint id uploads path of backend b1 to.
func blobOf(id CheckpointID, path string) string {
	return fmt.Sprintf("shared/chk-%d/b1/t/%s", id, path)
}

// up is a file checkpoint id uploaded.
func up(id CheckpointID, path string, size int64) FileRef {
	return FileRef{Path: path, Size: size, Blob: blobOf(id, path), Uploaded: true}
}

// ref is a placeholder for a file an earlier checkpoint uploaded.
func ref(path string, size int64) FileRef { return FileRef{Path: path, Size: size} }

func ackOf(files ...FileRef) SubtaskState {
	return SubtaskState{
		Backend: "paimon", BackendID: "b1",
		Tables: []TableState{{Name: "t", SnapshotID: 1, Files: files}},
		Extras: map[string]Extra{"source": {[]byte("offset=7")}},
	}
}

func newLedger(t *testing.T, retain int) *Ledger {
	t.Helper()
	l, err := NewLedger(retain)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func begin(t *testing.T, l *Ledger, id CheckpointID, kind Kind) {
	t.Helper()
	if err := l.Begin(id, kind); err != nil {
		t.Fatal(err)
	}
}

func ack(t *testing.T, l *Ledger, id CheckpointID, files ...FileRef) (SubtaskState, Plan) {
	t.Helper()
	s, p, err := l.Ack(id, ackOf(files...))
	if err != nil {
		t.Fatalf("ack %d: %v", id, err)
	}
	checkLedger(t, l)
	return s, p
}

func complete(t *testing.T, l *Ledger, id CheckpointID) Plan {
	t.Helper()
	p, err := l.Complete(id, MetadataBlobName(KindCheckpoint, id))
	if err != nil {
		t.Fatalf("complete %d: %v", id, err)
	}
	checkLedger(t, l)
	return p
}

func checkLedger(t *testing.T, l *Ledger) {
	t.Helper()
	if err := l.registry.checkInvariants(); err != nil {
		t.Fatalf("registry invariant: %v", err)
	}
}

func wantPlan(t *testing.T, what string, got, want Plan) {
	t.Helper()
	if !slices.Equal(got.Aborted, want.Aborted) || !slices.Equal(got.Subsumed, want.Subsumed) || !slices.Equal(got.Delete, want.Delete) {
		t.Fatalf("%s: plan %+v, want %+v", what, got, want)
	}
}

func TestIncrementalCheckpointsSubsumeAndDeleteOnlyUnsharedFiles(t *testing.T) {
	l := newLedger(t, 2)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 10), up(1, "b", 20))
	wantPlan(t, "complete 1", complete(t, l, 1), Plan{})

	begin(t, l, 2, KindCheckpoint)
	s, p := ack(t, l, 2, ref("a", 10), up(2, "c", 5)) // b compacted away
	wantPlan(t, "ack 2", p, Plan{})
	if f := s.Tables[0].Files[0]; f.Blob != blobOf(1, "a") || f.Uploaded {
		t.Fatalf("placeholder resolved to %+v", f)
	}
	if f := s.Tables[0].Files[1]; f.Blob != blobOf(2, "c") || !f.Uploaded {
		t.Fatalf("upload resolved to %+v", f)
	}
	wantPlan(t, "complete 2", complete(t, l, 2), Plan{})

	begin(t, l, 3, KindCheckpoint)
	ack(t, l, 3, ref("a", 10), up(3, "d", 1))
	wantPlan(t, "complete 3", complete(t, l, 3), Plan{
		Subsumed: []CheckpointID{1},
		Delete:   []string{"chk-1/_metadata", blobOf(1, "b")},
	})
	if got := l.Retained(); !slices.Equal(got, []CheckpointID{2, 3}) {
		t.Fatalf("retained = %v", got)
	}
	if id, meta, ok := l.Latest(); !ok || id != 3 || meta != "chk-3/_metadata" {
		t.Fatalf("latest = %d %q %v", id, meta, ok)
	}
	want := []string{"chk-2/_metadata", "chk-3/_metadata", blobOf(1, "a"), blobOf(2, "c"), blobOf(3, "d")}
	if got := l.LiveBlobs(); !slices.Equal(got, want) {
		t.Fatalf("live = %v, want %v", got, want)
	}
}

// FLINK-24611: aborting a checkpoint must not discard state that other
// checkpoints use. Only the aborted checkpoint's own, unshared uploads go.
func TestAbortReleasesOnlyWhatNoOtherCheckpointReferences(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)
	begin(t, l, 2, KindCheckpoint)
	ack(t, l, 2, ref("a", 1), up(2, "b", 1), up(2, "c", 1))
	begin(t, l, 3, KindCheckpoint)
	// A store that (wrongly) reuses checkpoint 2's unconfirmed upload b.
	ack(t, l, 3, ref("a", 1), ref("b", 1))
	wantPlan(t, "abort 2", l.Abort(2), Plan{Aborted: []CheckpointID{2}, Delete: []string{blobOf(2, "c")}})
	wantPlan(t, "abort 3", l.Abort(3), Plan{Aborted: []CheckpointID{3}, Delete: []string{blobOf(2, "b")}})
	if got := l.LiveBlobs(); !slices.Equal(got, []string{"chk-1/_metadata", blobOf(1, "a")}) {
		t.Fatalf("live = %v", got)
	}
}

// FLINK-25395: a placeholder for a file whose only checkpoint was aborted
// (and the file deleted) is rejected, and the rejected acknowledgement's own
// uploads are deleted rather than leaked.
func TestPlaceholderForAbortedUploadIsRejected(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 2, KindCheckpoint)
	ack(t, l, 2, up(2, "b", 1))
	wantPlan(t, "abort 2", l.Abort(2), Plan{Aborted: []CheckpointID{2}, Delete: []string{blobOf(2, "b")}})
	begin(t, l, 3, KindCheckpoint)
	_, p, err := l.Ack(3, ackOf(ref("b", 1), up(3, "x", 1)))
	if !errors.Is(err, ErrUnknownSharedFile) {
		t.Fatalf("err = %v, want ErrUnknownSharedFile", err)
	}
	wantPlan(t, "rejected ack", p, Plan{Delete: []string{blobOf(3, "x")}})
	wantPlan(t, "abort 3", l.Abort(3), Plan{Aborted: []CheckpointID{3}})
	if got := l.LiveBlobs(); len(got) != 0 {
		t.Fatalf("live = %v", got)
	}
}

// FLINK-30461: uploads of a checkpoint that timed out mid-upload must not be
// leaked: acknowledged ones go with the abort, late ones with their ack.
func TestTimedOutCheckpointLeaksNoUploads(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)
	begin(t, l, 2, KindCheckpoint)
	ack(t, l, 2, ref("a", 1), up(2, "b", 1)) // subtask 0 acknowledged
	wantPlan(t, "timeout", l.Abort(2), Plan{Aborted: []CheckpointID{2}, Delete: []string{blobOf(2, "b")}})

	late := ackOf(ref("a", 1), up(2, "c", 1))
	late.Index = 1
	_, p, err := l.Ack(2, late)
	if !errors.Is(err, ErrNotPending) {
		t.Fatalf("late ack err = %v", err)
	}
	wantPlan(t, "late ack", p, Plan{Delete: []string{blobOf(2, "c")}})
	if e, _ := l.Entry(FileKey{"b1", "t", "a"}); !slices.Equal(e.References, []CheckpointID{1}) {
		t.Fatalf("late ack registered references: %+v", e)
	}
}

// A duplicate acknowledgement of a completed checkpoint must not delete the
// blobs the first one registered.
func TestLateDuplicateAckKeepsRegisteredBlobs(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)
	_, p, err := l.Ack(1, ackOf(up(1, "a", 1)))
	if !errors.Is(err, ErrNotPending) {
		t.Fatalf("err = %v", err)
	}
	wantPlan(t, "duplicate ack", p, Plan{})
}

// FLINK-26801: abort notifications may repeat, and one may arrive after the
// checkpoint completed; neither changes anything.
func TestRepeatedAndLateAbortsAreNoOps(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)
	begin(t, l, 2, KindCheckpoint)
	ack(t, l, 2, up(2, "b", 1))
	wantPlan(t, "abort 2", l.Abort(2), Plan{Aborted: []CheckpointID{2}, Delete: []string{blobOf(2, "b")}})
	wantPlan(t, "abort 2 again", l.Abort(2), Plan{})
	wantPlan(t, "abort of completed 1", l.Abort(1), Plan{})
	wantPlan(t, "abort of unknown 9", l.Abort(9), Plan{})
	if got := l.Retained(); !slices.Equal(got, []CheckpointID{1}) {
		t.Fatalf("retained = %v", got)
	}
}

// Abort, then a late completion of the same checkpoint (its metadata was
// being written): the completion fails, the checkpoint never becomes
// retained, and its metadata blob is deleted.
func TestCompletionAfterAbortFailsAndDropsMetadata(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	l.Abort(1)
	p, err := l.Complete(1, "chk-1/_metadata")
	if !errors.Is(err, ErrNotPending) {
		t.Fatalf("err = %v", err)
	}
	wantPlan(t, "late complete", p, Plan{Delete: []string{"chk-1/_metadata"}})
	if _, _, ok := l.Latest(); ok {
		t.Fatalf("aborted checkpoint became the latest")
	}
	// Completing twice must not delete the live metadata.
	begin(t, l, 2, KindCheckpoint)
	complete(t, l, 2)
	p, err = l.Complete(2, "chk-2/_metadata")
	if !errors.Is(err, ErrNotPending) {
		t.Fatalf("second complete err = %v", err)
	}
	wantPlan(t, "second complete", p, Plan{})
}

// The notification-delay race: the store has not heard that checkpoint 1
// completed and uploads a again for checkpoint 2. The registry keeps
// checkpoint 1's blob; subsuming checkpoint 1 must not delete it, because
// checkpoint 2's metadata now names it.
func TestReuploadDuringDelayedConfirmationKeepsConfirmedBlob(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 10))
	complete(t, l, 1)
	begin(t, l, 2, KindCheckpoint)
	s, p := ack(t, l, 2, up(2, "a", 10))
	wantPlan(t, "re-upload", p, Plan{Delete: []string{blobOf(2, "a")}})
	if f := s.Tables[0].Files[0]; f.Blob != blobOf(1, "a") || f.Uploaded {
		t.Fatalf("metadata would name %+v", f)
	}
	wantPlan(t, "complete 2", complete(t, l, 2), Plan{Subsumed: []CheckpointID{1}, Delete: []string{"chk-1/_metadata"}})
	begin(t, l, 3, KindCheckpoint)
	s, _ = ack(t, l, 3, ref("a", 10))
	if s.Tables[0].Files[0].Blob != blobOf(1, "a") {
		t.Fatalf("placeholder resolved to %+v", s.Tables[0].Files[0])
	}
}

// A completed checkpoint aborts the pending checkpoints older than itself
// (they could never become the latest) but not a pending savepoint.
func TestCompletionAbortsOlderPendingCheckpointsOnly(t *testing.T) {
	l := newLedger(t, 3)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	begin(t, l, 2, KindSavepoint)
	begin(t, l, 3, KindCheckpoint)
	ack(t, l, 3, up(3, "c", 1))
	begin(t, l, 4, KindCheckpoint)
	wantPlan(t, "complete 3", complete(t, l, 3), Plan{Aborted: []CheckpointID{1}, Delete: []string{blobOf(1, "a")}})
	if got := l.Pending(); !slices.Equal(got, []CheckpointID{2, 4}) {
		t.Fatalf("pending = %v", got)
	}
}

// FLINK-23949's rule seen from the coordinator: a savepoint shares nothing.
// It neither subsumes nor confirms checkpoint files, its files are its own,
// and a checkpoint cannot reference them.
func TestSavepointsShareNothing(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)

	begin(t, l, 2, KindSavepoint)
	if _, p, err := l.Ack(2, ackOf(ref("a", 1))); err == nil {
		t.Fatalf("savepoint placeholder accepted")
	} else {
		wantPlan(t, "rejected savepoint ack", p, Plan{})
	}
	spFile := FileRef{Path: "a", Size: 1, Blob: "savepoint-2/b1/t/a", Uploaded: true}
	if _, p, err := l.Ack(2, ackOf(spFile)); err != nil || !p.IsEmpty() {
		t.Fatalf("savepoint ack: %+v, %v", p, err)
	}
	p, err := l.Complete(2, "savepoint-2/_metadata")
	if err != nil || !p.IsEmpty() {
		t.Fatalf("complete savepoint: %+v, %v", p, err)
	}
	if got := l.Retained(); !slices.Equal(got, []CheckpointID{1}) {
		t.Fatalf("retained after savepoint = %v", got)
	}
	// A checkpoint that names a savepoint blob as its own upload is rejected.
	begin(t, l, 3, KindCheckpoint)
	if _, _, err := l.Ack(3, ackOf(FileRef{Path: "z", Size: 1, Blob: "savepoint-2/b1/t/a", Uploaded: true})); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("checkpoint claiming a savepoint blob: %v", err)
	}
	ack(t, l, 3, ref("a", 1))
	wantPlan(t, "complete 3", complete(t, l, 3), Plan{Subsumed: []CheckpointID{1}, Delete: []string{"chk-1/_metadata"}})
	if got := l.Savepoints(); !slices.Equal(got, []CheckpointID{2}) {
		t.Fatalf("savepoints = %v", got)
	}
	p, err = l.DisposeSavepoint(2)
	if err != nil {
		t.Fatal(err)
	}
	wantPlan(t, "dispose", p, Plan{Delete: []string{"savepoint-2/_metadata", "savepoint-2/b1/t/a"}})
	if _, err := l.DisposeSavepoint(2); err == nil {
		t.Fatalf("disposing twice accepted")
	}
}

func TestAbortedSavepointDeletesItsUploads(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 5, KindSavepoint)
	f := FileRef{Path: "a", Size: 1, Blob: "savepoint-5/b1/t/a", Uploaded: true}
	if _, _, err := l.Ack(5, ackOf(f)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Ack(5, ackOf(f)); err != nil { // repeated
		t.Fatal(err)
	}
	wantPlan(t, "abort savepoint", l.Abort(5), Plan{Aborted: []CheckpointID{5}, Delete: []string{"savepoint-5/b1/t/a"}})
}

// Flink's failover case through the ledger: checkpoint 3 recreates a with
// other content. Checkpoint 3 completes with its own copy; the stale copy is
// deleted with the abort of checkpoint 2, not before.
func TestFailoverRecreatedFileSupersedesTheStaleCopy(t *testing.T) {
	l := newLedger(t, 1)
	begin(t, l, 2, KindCheckpoint)
	ack(t, l, 2, up(2, "a", 10), up(2, "b", 1))
	begin(t, l, 3, KindCheckpoint)
	s, p := ack(t, l, 3, up(3, "a", 11))
	wantPlan(t, "ack 3", p, Plan{})
	if f := s.Tables[0].Files[0]; f.Blob != blobOf(3, "a") || !f.Uploaded {
		t.Fatalf("resolved = %+v", f)
	}
	wantPlan(t, "abort 2", l.Abort(2), Plan{Aborted: []CheckpointID{2}, Delete: []string{blobOf(2, "a"), blobOf(2, "b")}})
	complete(t, l, 3)
}

// If the stale checkpoint is not aborted and tries to complete after the new
// copy was confirmed, the ledger aborts it rather than retain two
// checkpoints that disagree on a file.
func TestCompletingAStaleCheckpointIsRefused(t *testing.T) {
	// In order, completing the newer checkpoint aborts the stale one.
	l := newLedger(t, 2)
	begin(t, l, 3, KindCheckpoint)
	ack(t, l, 3, up(3, "a", 10), up(3, "b", 1))
	begin(t, l, 4, KindCheckpoint)
	ack(t, l, 4, up(4, "a", 11))
	wantPlan(t, "complete 4", complete(t, l, 4), Plan{Aborted: []CheckpointID{3}, Delete: []string{blobOf(3, "a"), blobOf(3, "b")}})

	// Out of order (the newer copy confirmed first), the guard refuses.
	l = newLedger(t, 2)
	begin(t, l, 3, KindCheckpoint)
	ack(t, l, 3, up(3, "a", 10), up(3, "b", 1))
	begin(t, l, 4, KindCheckpoint)
	ack(t, l, 4, up(4, "a", 11))
	l.registry.Confirm(4) // as if 4 had completed without aborting 3
	p, err := l.Complete(3, "chk-3/_metadata")
	if !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("err = %v", err)
	}
	wantPlan(t, "refused completion", p, Plan{Aborted: []CheckpointID{3}, Delete: []string{"chk-3/_metadata", blobOf(3, "a"), blobOf(3, "b")}})
}

// Concurrent checkpoints that both upload a not yet confirmed file can both
// complete: the later acknowledgement must not abort the earlier checkpoint.
func TestConcurrentCheckpointsBothComplete(t *testing.T) {
	l := newLedger(t, 2)
	begin(t, l, 1, KindCheckpoint)
	ack(t, l, 1, up(1, "a", 1))
	complete(t, l, 1)
	begin(t, l, 2, KindCheckpoint)
	begin(t, l, 3, KindCheckpoint)
	s3, p3 := ack(t, l, 3, ref("a", 1), up(3, "n", 4))
	s2, p2 := ack(t, l, 2, ref("a", 1), up(2, "n", 4))
	wantPlan(t, "ack 3", p3, Plan{})
	wantPlan(t, "ack 2", p2, Plan{})
	if s2.Tables[0].Files[1].Blob != blobOf(2, "n") || s3.Tables[0].Files[1].Blob != blobOf(3, "n") {
		t.Fatalf("each checkpoint must name its own copy: %+v / %+v", s2.Tables[0].Files[1], s3.Tables[0].Files[1])
	}
	wantPlan(t, "complete 2", complete(t, l, 2), Plan{})
	wantPlan(t, "complete 3", complete(t, l, 3), Plan{Subsumed: []CheckpointID{1}, Delete: []string{"chk-1/_metadata"}})
	begin(t, l, 4, KindCheckpoint)
	ack(t, l, 4, ref("a", 1), ref("n", 4))
	wantPlan(t, "complete 4", complete(t, l, 4), Plan{Subsumed: []CheckpointID{2}, Delete: []string{"chk-2/_metadata", blobOf(2, "n")}})
}

func TestRestoreSeedsReuseAndOwnership(t *testing.T) {
	m := sampleMetadata()
	m.ID = 7
	files := m.Operators[0].Subtasks[0].Tables[0].Files
	for _, owned := range []bool{true, false} {
		l := newLedger(t, 1)
		p, err := l.Restore(m, "chk-7/_metadata", owned)
		if err != nil || !p.IsEmpty() {
			t.Fatalf("restore: %+v, %v", p, err)
		}
		if err := l.Begin(7, KindCheckpoint); err == nil {
			t.Fatalf("begin at the restored id accepted")
		}
		begin(t, l, 8, KindCheckpoint)
		s := m.Operators[0].Subtasks[0]
		s.Tables = []TableState{{Name: "values", SnapshotID: 9, Files: []FileRef{
			{Path: files[0].Path, Size: files[0].Size},
			{Path: "bucket-0/data-new.parquet", Size: 3, Blob: "shared/chk-8/n", Uploaded: true},
		}}}
		got, _, err := l.Ack(8, s)
		if err != nil {
			t.Fatal(err)
		}
		if f := got.Tables[0].Files[0]; f.Blob != files[0].Blob {
			t.Fatalf("placeholder resolved to %+v, want restored %s", f, files[0].Blob)
		}
		p = complete(t, l, 8)
		want := Plan{Subsumed: []CheckpointID{7}}
		if owned {
			del := slices.DeleteFunc(allBlobs(m), func(b string) bool { return b == files[0].Blob })
			del = append(del, "chk-7/_metadata")
			slices.Sort(del)
			want.Delete = del
		}
		wantPlan(t, fmt.Sprintf("complete 8 (owned=%v)", owned), p, want)
	}
}

func TestRestoredSavepointIsNotAReuseBase(t *testing.T) {
	m := sampleSavepoint()
	l := newLedger(t, 1)
	if _, err := l.Restore(m, "savepoint-3/_metadata", true); err != nil {
		t.Fatal(err)
	}
	begin(t, l, 4, KindCheckpoint)
	f := m.Operators[0].Subtasks[0].Tables[0].Files[0]
	s := m.Operators[0].Subtasks[0]
	s.Tables = []TableState{{Name: "values", Files: []FileRef{{Path: f.Path, Size: f.Size}}}}
	if _, _, err := l.Ack(4, s); !errors.Is(err, ErrUnknownSharedFile) {
		t.Fatalf("checkpoint referencing a restored savepoint's file: %v", err)
	}
	p, err := l.DisposeSavepoint(3)
	if err != nil {
		t.Fatal(err)
	}
	want := append(allBlobs(m), "savepoint-3/_metadata")
	slices.Sort(want)
	wantPlan(t, "dispose restored savepoint", p, Plan{Delete: want})
}

func TestLedgerRejectsBadTransitions(t *testing.T) {
	if _, err := NewLedger(0); err == nil {
		t.Fatalf("retain 0 accepted")
	}
	l := newLedger(t, 1)
	if err := l.Begin(1, Kind(9)); err == nil {
		t.Fatalf("invalid kind accepted")
	}
	begin(t, l, 5, KindCheckpoint)
	if err := l.Begin(5, KindCheckpoint); err == nil {
		t.Fatalf("repeated id accepted")
	}
	if err := l.Begin(4, KindCheckpoint); err == nil {
		t.Fatalf("older id accepted")
	}
	if _, err := l.Complete(5, "/bad"); err == nil {
		t.Fatalf("invalid metadata blob accepted")
	}
	bad := ackOf(up(5, "a", 1))
	bad.BackendID = ""
	if _, p, err := l.Ack(5, bad); err == nil {
		t.Fatalf("ack without backend id accepted")
	} else {
		wantPlan(t, "invalid ack", p, Plan{Delete: []string{blobOf(5, "a")}})
	}
	m := sampleMetadata()
	m.ID = 5
	if _, err := l.Restore(m, "chk-5/_metadata", true); err == nil {
		t.Fatalf("restore at a used id accepted")
	}
}
