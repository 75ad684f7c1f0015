package barrier_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
)

// A savepoint whose upload fails leaves behind the blobs the uploader's
// discard could not delete. The store hands them to the coordinator with its
// decline, also when the savepoint was aborted by someone else first: the
// coordinator deletes them again, and those it cannot delete either are in
// Quiet.Leaked until the next start's sweep. Without the hand-over nothing
// knows them and they stay orphans for good.
func TestUploadLeaksReachTheCoordinator(t *testing.T) {
	for _, tc := range []struct {
		name string
		// abort: another subtask declines while the upload keeps failing
		// (the store cancels it); otherwise the upload's own failure
		// declines.
		abort bool
		// recovers: the landed blob's deletion fails only for the
		// uploader's discard, not for the coordinator.
		recovers bool
	}{
		{name: "upload fails, the coordinator deletes", recovers: true},
		{name: "upload fails, deletion keeps failing"},
		{name: "aborted during the upload, the coordinator deletes", abort: true, recovers: true},
		{name: "aborted during the upload, deletion keeps failing", abort: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleteFailures := 0 // forever
			if tc.recovers {
				deleteFailures = 3 // every attempt of the uploader's discard
			}
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			cfg := jobConfig{backend: barrier.BackendMemory, parallelism: 2, retain: 1, sim: 3}
			j := startJob(t, blobs, fs, root, cfg)
			for k := range int64(50) {
				j.put(k, k)
			}
			j.mustComplete(barrier.KindCheckpoint)
			j.put(7, 1)

			// The first savepoint file put lands, then fails: permanently,
			// or (abort) transiently on every attempt. Its deletions fail.
			var landed string
			blobs.inject(&blobFault{op: "put", land: true, transient: tc.abort, match: func(n string) bool {
				if landed == "" && strings.HasPrefix(n, "savepoint-2/") {
					landed = n
				}
				return n == landed
			}})
			blobs.inject(&blobFault{op: "delete", transient: true, times: deleteFailures, match: func(n string) bool { return n == landed }})

			id := j.trigger(barrier.KindSavepoint)
			j.barrier(id, barrier.KindSavepoint)
			if tc.abort {
				j.sys.Send(j.coord, &barrier.Decline{ID: id, Operator: opID, Subtask: 1, Err: errors.New("source failed")})
			}
			err, _ := j.await(id)
			switch {
			case err == nil:
				t.Fatal("savepoint with a failed upload completed")
			case tc.abort && !strings.Contains(err.Error(), "source failed"):
				t.Fatalf("savepoint aborted by %v, want the injected decline", err)
			}
			q := j.settle()
			if landed == "" {
				t.Fatal("no savepoint file was put")
			}
			if got, want := slices.Contains(blobs.names(), landed), !tc.recovers; got != want {
				t.Fatalf("after settling, %s is in the blob store: %v, want %v", landed, got, want)
			}
			if got, want := slices.Contains(q.Leaked, landed), !tc.recovers; got != want {
				t.Fatalf("coordinator lists %s as leaked: %v, want %v (leaked %v)", landed, got, want, q.Leaked)
			}
			for _, n := range blobs.names() {
				if !slices.Contains(q.LiveBlobs, n) && !slices.Contains(q.Leaked, n) {
					t.Fatalf("orphan blob %s: neither referenced nor reported leaked", n)
				}
			}
			blobs.clearFaults()
			if tc.recovers {
				j.checkNoLeaks()
			}
			j.stop()

			cfg.restoreLatest = true
			r := startJob(t, blobs, fs, root, cfg)
			if r.recovered.Swept != len(q.Leaked) {
				t.Fatalf("restart swept %d blobs, want the %d leaked", r.recovered.Swept, len(q.Leaked))
			}
			r.checkNoLeaks()
		})
	}
}
