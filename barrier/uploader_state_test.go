package barrier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fakeUploaderIO records what the upload queue asks for.
type fakeUploaderIO struct {
	puts     []string // "id/file/attempt"
	retries  []string
	delays   []time.Duration
	discards map[CheckpointID][]string
	finished []*uploadJob
}

func (f *fakeUploaderIO) put(j *uploadJob, i, attempt int) {
	f.puts = append(f.puts, fmt.Sprintf("%d/%d/%d", j.key.id, i, attempt))
}
func (f *fakeUploaderIO) retryAfter(d time.Duration, j *uploadJob, i int) {
	f.retries = append(f.retries, fmt.Sprintf("%d/%d", j.key.id, i))
	f.delays = append(f.delays, d)
}
func (f *fakeUploaderIO) discard(j *uploadJob, blobs []string) {
	if f.discards == nil {
		f.discards = map[CheckpointID][]string{}
	}
	f.discards[j.key.id] = blobs
}
func (f *fakeUploaderIO) finish(j *uploadJob) { f.finished = append(f.finished, j) }

func files(n int) []UploadFile {
	out := make([]UploadFile, n)
	for i := range out {
		out[i] = UploadFile{Blob: fmt.Sprintf("b%d", i), Data: [][]byte{{1}}, Size: 1}
	}
	return out
}

func TestUploadQueueBoundsParallelism(t *testing.T) {
	io := &fakeUploaderIO{}
	q := newUploadQueue(io, 2, RetryPolicy{}, rand.New(rand.NewPCG(1, 2)))
	k1, k2 := uploadKey{"s", 1}, uploadKey{"t", 1}
	if err := q.add(k1, files(3)); err != nil {
		t.Fatal(err)
	}
	if err := q.add(k2, files(1)); err != nil {
		t.Fatal(err)
	}
	if err := q.add(k1, files(1)); err == nil {
		t.Fatal("a second upload under one key")
	}
	if !slices.Equal(io.puts, []string{"1/0/1", "1/1/1"}) {
		t.Fatalf("puts %v", io.puts)
	}
	q.putDone(k1, 0, 1, nil)
	q.putDone(k1, 1, 1, nil)
	if !slices.Equal(io.puts, []string{"1/0/1", "1/1/1", "1/2/1", "1/0/1"}) {
		t.Fatalf("puts %v", io.puts) // the second job's file 0 is "1/0/1" too
	}
	q.putDone(k1, 2, 1, nil)
	q.putDone(k2, 0, 1, nil)
	if len(io.finished) != 2 || io.finished[0].err != nil || io.finished[0].bytes != 3 {
		t.Fatalf("finished %+v", io.finished)
	}
	empty := uploadKey{"u", 2}
	if err := q.add(empty, nil); err != nil || len(io.finished) != 3 {
		t.Fatal("an empty upload did not finish at once")
	}
}

func TestUploadQueueRetriesTransientFailures(t *testing.T) {
	io := &fakeUploaderIO{}
	q := newUploadQueue(io, 4, RetryPolicy{MaxAttempts: 3, Backoff: 10 * time.Millisecond, MaxBackoff: 15 * time.Millisecond}, rand.New(rand.NewPCG(1, 2)))
	k := uploadKey{"s", 7}
	q.add(k, files(1))
	transient := TransientError("put", "b0", errors.New("slow down"))
	q.putDone(k, 0, 1, transient)
	if len(io.retries) != 1 || len(io.finished) != 0 {
		t.Fatalf("retries %v finished %d", io.retries, len(io.finished))
	}
	q.retryDue(k, 0)
	q.putDone(k, 0, 2, transient)
	q.retryDue(k, 0)
	for _, d := range io.delays {
		if d < 10*time.Millisecond || d > 25*time.Millisecond {
			t.Fatalf("delay %v outside [backoff, max+jitter]", d)
		}
	}
	// The third attempt is the last.
	q.putDone(k, 0, 3, transient)
	if len(io.finished) != 0 || !slices.Equal(io.discards[7], []string{"b0"}) {
		t.Fatalf("exhausted retries: discards %v", io.discards)
	}
	q.discarded(k, nil)
	if len(io.finished) != 1 || !IsTransient(io.finished[0].err) || io.finished[0].retries != 2 {
		t.Fatalf("finished %+v", io.finished[0])
	}
}

func TestUploadQueueFailureDiscardsEverythingThatMayHaveLanded(t *testing.T) {
	io := &fakeUploaderIO{}
	q := newUploadQueue(io, 2, RetryPolicy{}, rand.New(rand.NewPCG(1, 2)))
	k := uploadKey{"s", 3}
	q.add(k, files(4))
	q.putDone(k, 0, 1, nil)                                                  // landed
	q.putDone(k, 1, 1, PermanentError("put", "b1", errors.New("forbidden"))) // fails the job
	// File 2 was dispatched after file 0 finished; nothing more starts.
	if got := len(io.puts); got != 3 {
		t.Fatalf("puts %v", io.puts)
	}
	if io.discards != nil {
		t.Fatal("discarded while a put was in flight")
	}
	q.putDone(k, 2, 1, nil)
	if want := []string{"b0", "b1", "b2"}; !slices.Equal(io.discards[3], want) {
		t.Fatalf("discards %v, want %v", io.discards[3], want)
	}
	q.discarded(k, []string{"b2"})
	if j := io.finished[0]; j.err == nil || !slices.Equal(j.leaked, []string{"b2"}) {
		t.Fatalf("finished %+v", j)
	}
}

func TestUploadQueueCancel(t *testing.T) {
	io := &fakeUploaderIO{}
	q := newUploadQueue(io, 1, RetryPolicy{}, rand.New(rand.NewPCG(1, 2)))
	k := uploadKey{"s", 4}
	q.add(k, files(3))
	q.putDone(k, 0, 1, TransientError("put", "b0", errors.New("timeout")))
	// File 1 took the free slot while file 0 waits for its retry.
	q.cancel(k)
	if io.discards != nil {
		t.Fatal("discarded while a put was in flight")
	}
	q.putDone(k, 1, 1, nil)
	// The pending retry does not hold the cancelled job back.
	if !slices.Equal(io.discards[4], []string{"b0", "b1"}) {
		t.Fatalf("discards %v", io.discards)
	}
	q.retryDue(k, 0) // fires after the cancel: dropped
	q.discarded(k, nil)
	if len(io.finished) != 1 || !errors.Is(io.finished[0].err, ErrUploadCancelled) {
		t.Fatalf("finished %+v", io.finished)
	}
	q.cancel(k) // after the end: nothing
	q.retryDue(k, 0)
	if len(io.puts) != 2 {
		t.Fatalf("puts %v", io.puts)
	}
}
