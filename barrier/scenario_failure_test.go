package barrier_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakestate/lakestate/barrier"
)

// Files uploaded by a checkpoint that timed out mid-upload are deleted, even
// a put that lands after the abort (FLINK-30461), and the next checkpoint
// completes. The timeout is the coordinator's clock message, delivered once
// a put of the checkpoint is blocked: a short wall-clock timeout would also
// abort, on a loaded machine, the checkpoints that must complete, or
// checkpoint 2 before any of its puts started.
func TestTimedOutUploadIsDeleted(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPebble, parallelism: 2, timeout: time.Hour})
	for k := range int64(300) {
		j.put(k, k)
	}
	j.mustComplete(barrier.KindCheckpoint)
	for k := range int64(300) {
		j.put(k+1, k)
	}
	release := make(chan struct{})
	entered := make(chan string, 16)
	blobs.inject(&blobFault{op: "put", block: release, entered: entered, times: 1, match: func(n string) bool {
		return strings.HasPrefix(n, "shared/chk-2/") && strings.HasSuffix(n, ".sst")
	}})
	id := j.trigger(barrier.KindCheckpoint)
	j.barrier(id, barrier.KindCheckpoint)
	blocked := <-entered
	j.sys.Send(j.coord, barrier.CheckpointTimeout(id))
	err, _ := j.await(id)
	if !errors.Is(err, barrier.ErrCheckpointTimeout) {
		t.Fatalf("checkpoint %d: %v, want a timeout", id, err)
	}
	close(release)
	j.checkNoLeaks()
	if slices.Contains(blobs.names(), blocked) || hasPrefix(blobs.names(), "shared/chk-2/") {
		t.Fatalf("uploads of the timed-out checkpoint remain: %v", blobs.names())
	}
	j.put(7, 1)
	j.mustComplete(barrier.KindCheckpoint)
	j.checkNoLeaks()
}

// Restoring several times from one checkpoint makes files of the same names
// with different content in different runs; each later checkpoint restores its
// own run's bytes. Pebble may compact a run's files before its checkpoint,
// which renumbers its output, so three runs are made: two of them take the
// same path and name their files alike.
func TestRestoreTwiceFromOneCheckpoint(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	cfg := jobConfig{backend: barrier.BackendPebble, parallelism: 1, retain: 4}
	j := startJob(t, blobs, fs, root, cfg)
	for k := range int64(100) {
		j.put(k, k)
	}
	m1 := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	j.stop()

	values := []int64{1000, 2000, 3000}
	runs := map[int64]*barrier.Metadata{}
	for _, v := range values {
		cfg.restore = m1
		r := startJob(t, blobs, fs, root, cfg)
		for k := range int64(100) {
			r.put(v+k, k)
		}
		runs[v] = r.metadata(r.mustComplete(barrier.KindCheckpoint))
		r.stop()
	}
	same := 0
	for i, va := range values {
		for _, vb := range values[i+1:] {
			a, b := fileSet(runs[va], 0), fileSet(runs[vb], 0)
			for p, fa := range a {
				if fb, ok := b[p]; ok && isSST(p) && fa.Uploaded && fb.Uploaded {
					same++
					if fa.Blob == fb.Blob {
						t.Fatalf("the %d and %d runs both uploaded %s to %s", va, vb, p, fa.Blob)
					}
				}
			}
		}
	}
	if same == 0 {
		for _, v := range values {
			t.Logf("run %d: %v", v, fileSet(runs[v], 0))
		}
		t.Fatal("no two runs made same-named new files")
	}
	for _, v := range values {
		cfg.restore = runs[v]
		r := startJob(t, blobs, fs, root, cfg)
		for _, k := range []int64{0, 42, 99} {
			if got := r.get(k); got[0] != v+k {
				t.Fatalf("restore of the %d run's checkpoint %d: key %d = %d, want %d", v, runs[v].ID, k, got[0], v+k)
			}
		}
		r.stop()
	}
}

// failurePoint injects one failure into checkpoint 2 of a job and undoes it.
type failurePoint struct {
	name     string
	backends []string
	// run takes checkpoint 2 with the failure and reports whether it
	// completed.
	run func(t *testing.T, j *job) bool
}

var failurePoints = []failurePoint{
	{name: "before sync", backends: backends, run: func(t *testing.T, j *job) bool {
		id := j.trigger(barrier.KindCheckpoint)
		j.sys.Send(j.coord, &barrier.Decline{ID: id, Operator: opID, Subtask: 0, Err: errors.New("source failed")})
		if err, _ := j.await(id); err == nil {
			t.Fatal("declined checkpoint completed")
		}
		for _, sd := range j.barrier(id, barrier.KindCheckpoint) {
			if !errors.Is(sd.Err, barrier.ErrCheckpointAborted) {
				t.Fatalf("sync phase of an aborted checkpoint: %v", sd.Err)
			}
		}
		return false
	}},
	{name: "during link", backends: []string{barrier.BackendPebble}, run: func(t *testing.T, j *job) bool {
		j.fs.failOn("list", func(p string) bool { return strings.HasSuffix(p, "/chk-2") })
		defer j.fs.failOn("list", nil)
		o := j.checkpoint(barrier.KindCheckpoint)
		if o.syncs[0].Err == nil {
			t.Fatal("the sync phase did not fail")
		}
		return o.err == nil
	}},
	{name: "pre-existing link directory", backends: []string{barrier.BackendPebble}, run: func(t *testing.T, j *job) bool {
		if err := os.MkdirAll(filepath.Join(j.tasks[1].workDir, "chk-2"), 0o755); err != nil {
			t.Fatal(err)
		}
		o := j.checkpoint(barrier.KindCheckpoint)
		if o.syncs[1].Err == nil {
			t.Fatal("the sync phase did not fail")
		}
		return o.err == nil
	}},
	{name: "during upload", backends: backends, run: func(t *testing.T, j *job) bool {
		f := j.blobs.inject(&blobFault{op: "put", times: 1, match: func(n string) bool { return strings.HasPrefix(n, "shared/chk-2/") }})
		defer j.blobs.clearFaults()
		o := j.checkpoint(barrier.KindCheckpoint)
		if f.hits != 1 {
			t.Fatalf("fault hit %d times", f.hits)
		}
		return o.err == nil
	}},
	{name: "transient upload failures exhausted", backends: backends, run: func(t *testing.T, j *job) bool {
		j.blobs.inject(&blobFault{op: "put", transient: true, land: true, match: func(n string) bool {
			return strings.HasPrefix(n, "shared/chk-2/") && !strings.Contains(n, "MANIFEST")
		}})
		defer j.blobs.clearFaults()
		return j.checkpoint(barrier.KindCheckpoint).err == nil
	}},
	{name: "during metadata write", backends: backends, run: func(t *testing.T, j *job) bool {
		j.blobs.inject(&blobFault{op: "put", times: 1, match: func(n string) bool { return n == "chk-2/_metadata" }})
		defer j.blobs.clearFaults()
		return j.checkpoint(barrier.KindCheckpoint).err == nil
	}},
	{name: "metadata lands but the write times out", backends: backends, run: func(t *testing.T, j *job) bool {
		j.blobs.inject(&blobFault{op: "put", times: 1, transient: true, land: true, match: func(n string) bool { return n == "chk-2/_metadata" }})
		defer j.blobs.clearFaults()
		o := j.checkpoint(barrier.KindCheckpoint)
		j.settle()
		if slices.Contains(j.blobs.names(), "chk-2/_metadata") {
			t.Fatal("metadata of the aborted checkpoint remains")
		}
		return o.err == nil
	}},
	{name: "during notification", backends: backends, run: func(t *testing.T, j *job) bool {
		j.tasks[0].deaf.Store(true)
		defer j.tasks[0].deaf.Store(false)
		return j.checkpoint(barrier.KindCheckpoint).err == nil
	}},
	{name: "deleting subsumed files", backends: backends, run: func(t *testing.T, j *job) bool {
		j.blobs.inject(&blobFault{op: "delete", match: func(n string) bool { return strings.HasPrefix(n, "chk-1/") }})
		defer j.blobs.clearFaults()
		return j.checkpoint(barrier.KindCheckpoint).err == nil
	}},
}

// Every failure point leaves the job able to take the next checkpoint
// without reopening anything, that checkpoint restores the right state, and
// nothing leaks: the blob store holds exactly what the coordinator
// references (after a restart's sweep, for blobs a failed deletion left) and
// no chk-* directory remains.
func TestFailurePoints(t *testing.T) {
	for _, fp := range failurePoints {
		for _, backend := range fp.backends {
			t.Run(fp.name+"/"+backend, func(t *testing.T) {
				blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
				cfg := jobConfig{backend: backend, parallelism: 2, retain: 1}
				j := startJob(t, blobs, fs, root, cfg)
				for k := range int64(200) {
					j.put(k, k)
				}
				j.mustComplete(barrier.KindCheckpoint)
				for k := range int64(200) {
					j.put(k+1000, k)
				}
				completed := fp.run(t, j)
				j.put(5, 500)
				o := j.mustComplete(barrier.KindCheckpoint)
				if completed {
					if o.id != 3 {
						t.Fatalf("checkpoint %d", o.id)
					}
				}
				q := j.settle()
				if len(q.Leaked) == 0 {
					j.checkNoLeaks()
				}
				j.stop()

				cfg.restoreLatest = true
				r := startJob(t, blobs, fs, root, cfg)
				if r.recovered.Latest == nil || r.recovered.Latest.ID != o.id {
					t.Fatalf("recovered %+v, want checkpoint %d", r.recovered, o.id)
				}
				if got := r.get(0, 1, 199, 500); !slices.Equal(got, []int64{1000, 1001, 1199, 5}) {
					t.Fatalf("restored %v", got)
				}
				r.checkNoLeaks()
			})
		}
	}
}
