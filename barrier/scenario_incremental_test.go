package barrier_test

import (
	"strings"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
)

// fileSet is a subtask's files by path.
func fileSet(m *barrier.Metadata, subtask int) map[string]barrier.FileRef {
	out := map[string]barrier.FileRef{}
	op, _ := m.Operator(opID)
	for _, t := range op.Subtasks[subtask].Tables {
		for _, f := range t.Files {
			out[t.Name+"/"+f.Path] = f
		}
	}
	return out
}

func isSST(p string) bool { return strings.HasSuffix(p, ".sst") }

// Each checkpoint uploads exactly the immutable files that did not exist at
// the last confirmed checkpoint, references the others, and re-uploads the
// files that change in place (Pebble's MANIFEST, OPTIONS, markers).
func TestCheckpointUploadsOnlyNewFiles(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPebble, parallelism: 1, retain: 3})
	var prev map[string]barrier.FileRef
	everReused := false
	for round := range 5 {
		for k := range int64(200) {
			j.put(int64(round), int64(round)*1000+k)
		}
		o := j.mustComplete(barrier.KindCheckpoint)
		cur := fileSet(j.metadata(o), 0)
		var uploadBytes int64
		reused := 0
		for p, f := range cur {
			_, existed := prev[p]
			switch {
			case !isSST(p) && !f.Uploaded:
				t.Fatalf("checkpoint %d references %s, which changes in place", o.id, p)
			case isSST(p) && existed && f.Uploaded:
				t.Fatalf("checkpoint %d re-uploads %s, which checkpoint %d uploaded", o.id, p, o.id-1)
			case isSST(p) && !existed && !f.Uploaded:
				t.Fatalf("checkpoint %d references new file %s", o.id, p)
			case isSST(p) && existed && f.Blob != prev[p].Blob:
				t.Fatalf("checkpoint %d resolves %s to %s, checkpoint %d had %s", o.id, p, f.Blob, o.id-1, prev[p].Blob)
			}
			if f.Uploaded {
				uploadBytes += f.Size
			} else {
				reused++
			}
		}
		if sd := o.ups[0]; sd.UploadBytes != uploadBytes || sd.Reused != reused {
			t.Fatalf("checkpoint %d: sync reported %d bytes, %d reused; metadata says %d, %d", o.id, sd.UploadBytes, sd.Reused, uploadBytes, reused)
		}
		everReused = everReused || reused > 0
		prev = cur
	}
	if !everReused {
		t.Fatal("no checkpoint reused a file")
	}
	j.checkNoLeaks()
}

// A savepoint between two checkpoints uploads everything to its own
// directory and does not reset the reuse base: the next checkpoint still
// references the first checkpoint's files. The subtask that writes before
// checkpoint 3 flushes a second overlapping level-0 file, which Pebble may
// compact with the first before the checkpoint, leaving nothing to reuse;
// the other subtask's one file stays, so it must be referenced.
func TestSavepointKeepsNextCheckpointIncremental(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPebble, parallelism: 2, retain: 1})
	for k := range int64(300) {
		j.put(k, k)
	}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	m1 := j.metadata(c1)
	sp := j.mustComplete(barrier.KindSavepoint)
	for _, sd := range sp.ups {
		if sd.Reused != 0 {
			t.Fatalf("savepoint reused %d files", sd.Reused)
		}
	}
	spMeta := j.metadata(sp)
	for i := range 2 {
		for p, f := range fileSet(spMeta, i) {
			if !f.Uploaded || !strings.HasPrefix(f.Blob, "savepoint-2/") {
				t.Fatalf("savepoint file %s in blob %s (uploaded %t)", p, f.Blob, f.Uploaded)
			}
		}
	}
	j.put(1, 5000)
	written := j.owner(5000).idx
	c3 := j.mustComplete(barrier.KindCheckpoint)
	m3 := j.metadata(c3)
	for i := range 2 {
		if i != written && c3.ups[i].Reused == 0 {
			t.Fatalf("subtask %d: checkpoint 3 after a savepoint is full", i)
		}
		first := fileSet(m1, i)
		for p, f := range fileSet(m3, i) {
			if !f.Uploaded && (first[p].Blob != f.Blob || !strings.HasPrefix(f.Blob, "shared/chk-1/")) {
				t.Fatalf("subtask %d: checkpoint 3 references %s as %s", i, p, f.Blob)
			}
			if _, inFirst := first[p]; f.Uploaded && inFirst && isSST(p) {
				t.Fatalf("subtask %d: checkpoint 3 uploads %s again, which checkpoint 1 uploaded", i, p)
			}
		}
	}
	j.checkNoLeaks()
	if !hasPrefix(blobs.names(), "savepoint-2/") {
		t.Fatal("the savepoint's files are gone")
	}
}

func hasPrefix(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// An aborted checkpoint's uploads never become a reuse base: the next
// checkpoint uploads its files again, referencing only the last confirmed
// checkpoint, and nothing of the aborted attempt stays in the store.
func TestAbortedCheckpointIsNotReused(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPebble, parallelism: 2, retain: 2})
	for k := range int64(300) {
		j.put(k, k)
	}
	c1 := j.mustComplete(barrier.KindCheckpoint)
	op, _ := j.metadata(c1).Operator(opID)
	backend1 := op.Subtasks[1].BackendID
	for k := range int64(300) {
		j.put(k+1, k)
	}
	// Subtask 1's uploads of checkpoint 2 fail for good, after subtask 0's
	// succeeded and were acknowledged.
	f := blobs.inject(&blobFault{op: "put", match: func(n string) bool {
		return strings.HasPrefix(n, "shared/chk-2/"+backend1)
	}})
	id := j.trigger(barrier.KindCheckpoint)
	c2 := outcome{id: id}
	for _, tk := range j.tasks {
		j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID()})
		sd, err := actors.Expect[*barrier.SyncDone](tk.syncs)
		if err != nil {
			t.Fatal(err)
		}
		c2.syncs = append(c2.syncs, sd)
		j.sys.Request(tk.relay, &barrier.Drain{}, j.ctl.PID())
		if _, err := actors.Expect[*barrier.Drained](j.ctl); err != nil {
			t.Fatal(err)
		}
	}
	c2.ups = j.uploadStats(id) // both handed their uploads off before the failure
	if c2.err, _ = j.await(id); c2.err == nil {
		t.Fatal("checkpoint 2 completed despite a failed upload")
	}
	if f.hits == 0 {
		t.Fatal("the fault never hit")
	}
	blobs.clearFaults()
	c3 := j.mustComplete(barrier.KindCheckpoint)
	m3 := j.metadata(c3)
	for i := range 2 {
		for p, f := range fileSet(m3, i) {
			if strings.Contains(f.Blob, "chk-2/") {
				t.Fatalf("subtask %d: checkpoint 3 names %s from aborted checkpoint 2 (%s)", i, f.Blob, p)
			}
			if !f.Uploaded && !strings.HasPrefix(f.Blob, "shared/chk-1/") {
				t.Fatalf("subtask %d: checkpoint 3 references %s", i, f.Blob)
			}
		}
		if c2.ups[i].Uploads == 0 {
			t.Fatalf("subtask %d uploaded nothing in checkpoint 2", i)
		}
	}
	j.checkNoLeaks()
	if hasPrefix(blobs.names(), "shared/chk-2/") {
		t.Fatal("uploads of aborted checkpoint 2 remain")
	}
}
