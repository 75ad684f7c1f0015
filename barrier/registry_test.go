package barrier

import (
	"errors"
	"slices"
	"testing"
)

func fkey(path string) FileKey { return FileKey{Backend: "b1", Table: "t", Path: path} }

func upload(path, blob string, size int64) SharedRef {
	return SharedRef{Key: fkey(path), Blob: blob, Size: size}
}

func placeholder(path string, size int64) SharedRef {
	return SharedRef{Key: fkey(path), Size: size, Placeholder: true}
}

func register(t *testing.T, r *Registry, id CheckpointID, refs ...SharedRef) Registration {
	t.Helper()
	reg, err := r.Register(id, refs)
	if err != nil {
		t.Fatalf("register %d: %v", id, err)
	}
	checkRegistry(t, r)
	return reg
}

func checkRegistry(t *testing.T, r *Registry) {
	t.Helper()
	if err := r.checkInvariants(); err != nil {
		t.Fatalf("registry invariant: %v", err)
	}
}

func entry(t *testing.T, r *Registry, path string) SharedEntry {
	t.Helper()
	e, ok := r.Entry(fkey(path))
	if !ok {
		t.Fatalf("no entry for %s", path)
	}
	return e
}

func TestRegisterNewFilesThenPlaceholders(t *testing.T) {
	r := NewRegistry()
	reg := register(t, r, 1, upload("a", "s/1/a", 10), upload("b", "s/1/b", 20))
	if len(reg.Discard) != 0 {
		t.Fatalf("first registration: %+v", reg)
	}
	if reg.Resolved[0].Placeholder || reg.Resolved[0].Blob != "s/1/a" {
		t.Fatalf("own upload resolved as %+v", reg.Resolved[0])
	}
	if entry(t, r, "a").Confirmed {
		t.Fatalf("confirmed before completion")
	}
	r.Confirm(1)
	reg = register(t, r, 2, placeholder("a", 10), upload("c", "s/2/c", 5))
	want := []SharedRef{
		{Key: fkey("a"), Size: 10, Blob: "s/1/a", Placeholder: true},
		{Key: fkey("c"), Size: 5, Blob: "s/2/c"},
	}
	if !slices.Equal(reg.Resolved, want) {
		t.Fatalf("resolved %+v, want %+v", reg.Resolved, want)
	}
	if e := entry(t, r, "a"); !e.Confirmed || !slices.Equal(e.References, []CheckpointID{1, 2}) || e.CreatedBy != 1 {
		t.Fatalf("entry a = %+v", e)
	}
	if entry(t, r, "c").Confirmed {
		t.Fatalf("c confirmed by checkpoint 1's completion")
	}
}

// Flink: "Attempt to reference unknown state". A placeholder must never
// resurrect a file nobody registered, and the failed registration changes
// nothing.
func TestPlaceholderForUnknownFileFailsAtomically(t *testing.T) {
	r := NewRegistry()
	_, err := r.Register(1, []SharedRef{upload("x", "s/1/x", 1), placeholder("y", 2)})
	if !errors.Is(err, ErrUnknownSharedFile) {
		t.Fatalf("err = %v, want ErrUnknownSharedFile", err)
	}
	if r.Len() != 0 || r.HasBlob("s/1/x") {
		t.Fatalf("failed registration left %d entries", r.Len())
	}
	checkRegistry(t, r)
}

// Flink: a confirmed entry and a different new handle means confirmation was
// delayed and the store re-uploaded; the registry keeps the confirmed copy
// and the new upload is deleted.
func TestReuploadOfConfirmedFileIsDiscarded(t *testing.T) {
	r := NewRegistry()
	register(t, r, 1, upload("a", "s/1/a", 10))
	r.Confirm(1)
	reg := register(t, r, 2, upload("a", "s/2/a", 10))
	if !slices.Equal(reg.Discard, []string{"s/2/a"}) {
		t.Fatalf("registration = %+v", reg)
	}
	if got := reg.Resolved[0]; got.Blob != "s/1/a" || !got.Placeholder {
		t.Fatalf("resolved to %+v, want the confirmed s/1/a as a reference", got)
	}
	if e := entry(t, r, "a"); e.Blob != "s/1/a" || e.CreatedBy != 1 || !slices.Equal(e.References, []CheckpointID{1, 2}) {
		t.Fatalf("entry = %+v", e)
	}
	if r.HasBlob("s/2/a") {
		t.Fatalf("discarded upload still registered")
	}
}

// A "re-upload" whose size differs from the confirmed file is not a re-upload:
// keeping either copy would leave some checkpoint pointing at wrong content.
func TestReuploadOfConfirmedFileWithOtherSizeConflicts(t *testing.T) {
	r := NewRegistry()
	register(t, r, 1, upload("a", "s/1/a", 10))
	r.Confirm(1)
	if _, err := r.Register(2, []SharedRef{upload("a", "s/2/a", 11)}); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("err = %v", err)
	}
	if _, err := r.Register(2, []SharedRef{placeholder("a", 11)}); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("placeholder of the wrong size: err = %v", err)
	}
	if _, err := r.Register(2, []SharedRef{upload("a", "s/1/a", 12)}); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("registered blob with another size: err = %v", err)
	}
	if e := entry(t, r, "a"); !slices.Equal(e.References, []CheckpointID{1}) {
		t.Fatalf("failed registrations added references: %+v", e)
	}
}

// Flink's failover case: a store restored from checkpoint 1 uploads file a
// for checkpoint 2, crashes, restores from checkpoint 1 again and recreates a
// with different content for checkpoint 3. The new upload becomes the key's
// current copy, so later placeholders resolve to it; the stale copy goes as
// soon as checkpoint 2, the only one naming it, is released.
func TestUnconfirmedFileSupersededByDifferentUpload(t *testing.T) {
	r := NewRegistry()
	register(t, r, 2, upload("a", "s/2/a", 10), upload("b", "s/2/b", 1))
	reg := register(t, r, 3, upload("a", "s/3/a", 12))
	if len(reg.Discard) != 0 {
		t.Fatalf("discarded %v while checkpoint 2 still names it", reg.Discard)
	}
	if got := reg.Resolved[0]; got.Blob != "s/3/a" || got.Placeholder || got.Size != 12 {
		t.Fatalf("resolved = %+v", got)
	}
	e := entry(t, r, "a")
	if e.Blob != "s/3/a" || e.CreatedBy != 3 || e.Size != 12 || len(e.Superseded) != 1 || e.Superseded[0].Blob != "s/2/a" {
		t.Fatalf("entry = %+v", e)
	}
	if reg := register(t, r, 4, placeholder("a", 12)); reg.Resolved[0].Blob != "s/3/a" {
		t.Fatalf("placeholder resolved to the stale copy: %+v", reg.Resolved[0])
	}
	if got := r.Release(2); !slices.Equal(got, []string{"s/2/a", "s/2/b"}) {
		t.Fatalf("release 2 = %v, want the stale copy and b", got)
	}
	checkRegistry(t, r)
	if e := entry(t, r, "a"); len(e.Superseded) != 0 || !slices.Equal(e.References, []CheckpointID{3, 4}) {
		t.Fatalf("entry a = %+v", e)
	}
}

// Two concurrent checkpoints both upload a file that is not confirmed yet
// (each store reuses only confirmed files). Each keeps its own copy, both can
// complete, and no blob either names is deleted while it is retained.
func TestConcurrentCheckpointsKeepTheirOwnCopies(t *testing.T) {
	r := NewRegistry()
	register(t, r, 2, upload("n", "s/2/n", 5))
	register(t, r, 3, upload("n", "s/3/n", 5))
	if err := r.CheckConfirm(2); err != nil {
		t.Fatal(err)
	}
	r.Confirm(2)
	if err := r.CheckConfirm(3); err != nil {
		t.Fatalf("same-size copies from concurrent checkpoints: %v", err)
	}
	r.Confirm(3)
	checkRegistry(t, r)
	if e := entry(t, r, "n"); e.Blob != "s/3/n" || !e.Confirmed || len(e.Superseded) != 1 || !e.Superseded[0].Confirmed {
		t.Fatalf("entry = %+v", e)
	}
	// A re-upload after both confirmed is discarded in favour of the current copy.
	if reg := register(t, r, 4, upload("n", "s/4/n", 5)); !slices.Equal(reg.Discard, []string{"s/4/n"}) || reg.Resolved[0].Blob != "s/3/n" {
		t.Fatalf("re-upload = %+v", reg)
	}
	if got := r.Release(2); !slices.Equal(got, []string{"s/2/n"}) {
		t.Fatalf("release 2 = %v", got)
	}
	if got := r.Release(3); len(got) != 0 {
		t.Fatalf("release 3 = %v while checkpoint 4 references s/3/n", got)
	}
}

// Two completed checkpoints must never disagree on a file's content.
func TestConfirmingACopyOfAnotherSizeIsRejected(t *testing.T) {
	r := NewRegistry()
	register(t, r, 2, upload("n", "s/2/n", 5))
	register(t, r, 3, upload("n", "s/3/n", 6))
	r.Confirm(3)
	if err := r.CheckConfirm(2); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("CheckConfirm(2) = %v", err)
	}
	if err := r.CheckConfirm(99); err != nil {
		t.Fatalf("CheckConfirm of an unknown checkpoint: %v", err)
	}
}

func TestRepeatedAcknowledgementIsIdempotent(t *testing.T) {
	r := NewRegistry()
	register(t, r, 1, upload("a", "s/1/a", 10))
	reg := register(t, r, 1, upload("a", "s/1/a", 10))
	if len(reg.Discard) != 0 || reg.Resolved[0].Placeholder {
		t.Fatalf("repeat = %+v", reg)
	}
	if got := r.Release(1); !slices.Equal(got, []string{"s/1/a"}) {
		t.Fatalf("release = %v", got)
	}
	checkRegistry(t, r)
}

func TestTwoUploadsForOneKeyInOneCheckpointConflict(t *testing.T) {
	r := NewRegistry()
	register(t, r, 4, upload("a", "s/4/a", 10))
	if _, err := r.Register(4, []SharedRef{upload("a", "s/4/a-again", 10)}); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("err = %v", err)
	}
	if _, err := r.Register(5, []SharedRef{upload("x", "s/5/x", 1), upload("x", "s/5/x", 1)}); err == nil {
		t.Fatalf("a key listed twice in one registration was accepted")
	}
	if _, err := r.Register(0, nil); err == nil {
		t.Fatalf("checkpoint 0 accepted")
	}
	if _, err := r.Register(5, []SharedRef{upload("x", "/abs", 1)}); err == nil {
		t.Fatalf("invalid blob name accepted")
	}
	checkRegistry(t, r)
}

// Confirmation is exact: once any completed checkpoint references a file,
// no later upload may replace it. Flink marks only entries whose last user is
// the completed checkpoint, so here (checkpoint 2 completes while pending 3
// also uses a, then 3 aborts) it would leave a unconfirmed and let
// checkpoint 4's upload replace the blob completed checkpoint 2 needs.
func TestConfirmationCoversEveryCompletedReference(t *testing.T) {
	r := NewRegistry()
	register(t, r, 2, upload("a", "s/2/a", 10))
	register(t, r, 3, placeholder("a", 10))
	r.Confirm(2)
	if got := r.Release(3); len(got) != 0 {
		t.Fatalf("release 3 = %v", got)
	}
	reg := register(t, r, 4, upload("a", "s/4/a", 10))
	if !slices.Equal(reg.Discard, []string{"s/4/a"}) || reg.Resolved[0].Blob != "s/2/a" {
		t.Fatalf("registration = %+v, want s/2/a kept", reg)
	}
}

func TestReleaseReportsExactlyTheUnreferencedBlobs(t *testing.T) {
	r := NewRegistry()
	register(t, r, 1, upload("a", "s/1/a", 1), upload("b", "s/1/b", 1))
	r.Confirm(1)
	register(t, r, 2, placeholder("a", 1), upload("c", "s/2/c", 1))
	r.Confirm(2)
	if got := r.Release(1); !slices.Equal(got, []string{"s/1/b"}) {
		t.Fatalf("release 1 = %v", got)
	}
	if got := r.Release(1); len(got) != 0 {
		t.Fatalf("second release 1 = %v", got)
	}
	if got := r.Release(99); len(got) != 0 {
		t.Fatalf("release of unknown checkpoint = %v", got)
	}
	if got := r.Release(2); !slices.Equal(got, []string{"s/1/a", "s/2/c"}) {
		t.Fatalf("release 2 = %v", got)
	}
	if r.Len() != 0 || len(r.Blobs()) != 0 {
		t.Fatalf("registry not empty: %d keys, blobs %v", r.Len(), r.Blobs())
	}
	checkRegistry(t, r)
}

// Two keys may hold one blob (files adopted by reference after a rescale);
// the blob goes only when the last key does.
func TestBlobSharedByTwoKeysOutlivesTheFirst(t *testing.T) {
	r := NewRegistry()
	k2 := FileKey{Backend: "b2", Table: "t", Path: "a"}
	register(t, r, 1, upload("a", "s/1/a", 7))
	r.Confirm(1)
	if _, err := r.Register(2, []SharedRef{{Key: k2, Blob: "s/1/a", Size: 7}}); err != nil {
		t.Fatal(err)
	}
	checkRegistry(t, r)
	if got := r.Release(1); len(got) != 0 {
		t.Fatalf("release 1 deleted %v, still held by %s", got, k2)
	}
	if got := r.Release(2); !slices.Equal(got, []string{"s/1/a"}) {
		t.Fatalf("release 2 = %v", got)
	}
}

func TestRestoreRegistersConfirmedFiles(t *testing.T) {
	r := NewRegistry()
	refs := []SharedRef{upload("a", "s/5/a", 3), {Key: fkey("b"), Blob: "s/4/b", Size: 4, Placeholder: true}}
	if err := r.Restore(5, refs, true); err != nil {
		t.Fatal(err)
	}
	checkRegistry(t, r)
	if e := entry(t, r, "b"); !e.Confirmed || e.Blob != "s/4/b" {
		t.Fatalf("restored entry = %+v", e)
	}
	// A placeholder of a new checkpoint resolves to the restored blob.
	reg := register(t, r, 6, placeholder("b", 4))
	if reg.Resolved[0].Blob != "s/4/b" {
		t.Fatalf("resolved = %+v", reg.Resolved[0])
	}
	if err := r.Restore(5, refs, true); err == nil {
		t.Fatalf("restoring checkpoint 5 twice accepted")
	}
	if err := r.Restore(7, []SharedRef{upload("a", "s/7/a", 4)}, true); !errors.Is(err, ErrConflictingSharedFile) {
		t.Fatalf("restore with another size for a: %v", err)
	}
	r.Release(6)
	if got := r.Release(5); !slices.Equal(got, []string{"s/4/b", "s/5/a"}) {
		t.Fatalf("release of owned restored checkpoint = %v", got)
	}
}

func TestRestoredBlobsWithoutOwnershipAreNeverDeleted(t *testing.T) {
	r := NewRegistry()
	if err := r.Restore(5, []SharedRef{upload("a", "other-job/a", 3)}, false); err != nil {
		t.Fatal(err)
	}
	register(t, r, 6, placeholder("a", 3), upload("n", "s/6/n", 1))
	r.Confirm(6)
	if got := r.Release(5); len(got) != 0 {
		t.Fatalf("release 5 = %v", got)
	}
	if got := r.Release(6); !slices.Equal(got, []string{"s/6/n"}) {
		t.Fatalf("release 6 = %v, want only this job's upload", got)
	}
	checkRegistry(t, r)
}

// Two retained checkpoints that completed concurrently each name their own
// copy of a file; restoring both keeps both copies.
func TestRestoreKeepsEachCheckpointsCopy(t *testing.T) {
	r := NewRegistry()
	if err := r.Restore(5, []SharedRef{upload("n", "s/5/n", 3)}, true); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(6, []SharedRef{upload("n", "s/6/n", 3)}, true); err != nil {
		t.Fatal(err)
	}
	checkRegistry(t, r)
	if e := entry(t, r, "n"); e.Blob != "s/6/n" || len(e.Superseded) != 1 || !e.Superseded[0].Confirmed {
		t.Fatalf("entry = %+v", e)
	}
	if got := r.Release(5); !slices.Equal(got, []string{"s/5/n"}) {
		t.Fatalf("release 5 = %v", got)
	}
}
