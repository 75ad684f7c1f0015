package barrier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds the uploader's retries of transient failures.
type RetryPolicy struct {
	// MaxAttempts is how many times one file is tried (default 4).
	MaxAttempts int
	// Backoff is the wait before the first retry (default 50ms); it doubles
	// per attempt up to MaxBackoff (default 2s), plus up to Backoff of jitter.
	Backoff, MaxBackoff time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.Backoff <= 0 {
		p.Backoff = 50 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 2 * time.Second
	}
	return p
}

// delay is the wait before attempt (2 = the first retry).
func (p RetryPolicy) delay(attempt int, r *rand.Rand) time.Duration {
	d := p.Backoff
	for i := 2; i < attempt && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	return d + time.Duration(r.Int64N(int64(p.Backoff)+1))
}

// ErrUploadCancelled: the upload was cancelled (its checkpoint aborted).
var ErrUploadCancelled = errors.New("upload cancelled")

// uploadKey names one upload: the store that asked and its checkpoint.
type uploadKey struct {
	owner string
	id    CheckpointID
}

// uploadJob is the progress of one Upload.
type uploadJob struct {
	key      uploadKey
	files    []UploadFile
	next     int   // next file never dispatched
	ready    []int // files whose retry is due
	attempts []int
	done     int
	inFlight int
	// landed holds blobs that may exist: puts that succeeded or failed
	// ambiguously. A failed or cancelled upload deletes them.
	landed     map[string]bool
	bytes      int64
	retries    int
	err        error // first permanent failure, or ErrUploadCancelled
	discarding bool
	leaked     []string // blobs a discard failed to delete
}

func (j *uploadJob) stopped() bool { return j.err != nil }

// uploaderIO is what the upload state machine asks of its actor.
type uploaderIO interface {
	// put starts the given attempt of file i of job j on the executor.
	put(j *uploadJob, i, attempt int)
	// retryAfter delivers a retry of file i of job j after d.
	retryAfter(d time.Duration, j *uploadJob, i int)
	// discard deletes blobs on the executor, then reports back.
	discard(j *uploadJob, blobs []string)
	// finish reports the job's outcome to its owner.
	finish(j *uploadJob)
}

// uploadQueue is the uploader's state machine: jobs in arrival order, at most
// limit puts in flight over all of them, transient failures retried with
// backoff, and a failed or cancelled job's possibly-landed blobs deleted
// before its owner hears of the outcome.
type uploadQueue struct {
	io       uploaderIO
	policy   RetryPolicy
	rand     *rand.Rand
	limit    int
	inFlight int
	jobs     []*uploadJob
	byKey    map[uploadKey]*uploadJob
}

func newUploadQueue(io uploaderIO, limit int, policy RetryPolicy, r *rand.Rand) *uploadQueue {
	if limit <= 0 {
		limit = 4
	}
	return &uploadQueue{io: io, policy: policy.withDefaults(), rand: r, limit: limit, byKey: map[uploadKey]*uploadJob{}}
}

// add queues a job. A second job under a live key is refused.
func (u *uploadQueue) add(key uploadKey, files []UploadFile) error {
	if _, dup := u.byKey[key]; dup {
		return fmt.Errorf("upload of checkpoint %d by %s is already running", key.id, key.owner)
	}
	j := &uploadJob{key: key, files: files, attempts: make([]int, len(files)), landed: map[string]bool{}}
	u.jobs = append(u.jobs, j)
	u.byKey[key] = j
	u.settle(j)
	u.pump()
	return nil
}

// pump dispatches puts while slots are free, oldest job first.
func (u *uploadQueue) pump() {
	for _, j := range u.jobs {
		for u.inFlight < u.limit && !j.stopped() {
			i := -1
			switch {
			case len(j.ready) > 0:
				i, j.ready = j.ready[0], j.ready[1:]
			case j.next < len(j.files):
				i = j.next
				j.next++
			}
			if i < 0 {
				break
			}
			j.attempts[i]++
			j.inFlight++
			u.inFlight++
			u.io.put(j, i, j.attempts[i])
		}
		if u.inFlight >= u.limit {
			return
		}
	}
}

// putDone handles the result of one put attempt.
func (u *uploadQueue) putDone(key uploadKey, i, attempt int, err error) {
	j := u.byKey[key]
	if j == nil || j.attempts[i] != attempt {
		panic(fmt.Sprintf("barrier: result of put %d attempt %d of a job not waiting for it", i, attempt))
	}
	j.inFlight--
	u.inFlight--
	f := j.files[i]
	// Every attempt may have landed, even a failed one: a transient error is
	// ambiguous, and a permanent one may follow an earlier attempt that did.
	j.landed[f.Blob] = true
	switch {
	case err == nil:
		j.done++
		j.bytes += f.Size
	case j.stopped():
	case IsTransient(err) && attempt < u.policy.MaxAttempts:
		j.retries++
		u.io.retryAfter(u.policy.delay(attempt+1, u.rand), j, i)
	default:
		j.err = fmt.Errorf("upload of %s failed (attempt %d of %d): %w", f.Blob, attempt, u.policy.MaxAttempts, err)
	}
	u.settle(j)
	u.pump()
}

// retryDue makes a retry of file i dispatchable. A retry of a job that
// stopped or finished meanwhile is dropped.
func (u *uploadQueue) retryDue(key uploadKey, i int) {
	j := u.byKey[key]
	if j == nil || j.stopped() {
		return
	}
	j.ready = append(j.ready, i)
	u.pump()
}

// cancel stops a job: nothing more is dispatched, and once its puts in
// flight return, what may have landed is deleted. Cancelling a job that
// already finished does nothing.
func (u *uploadQueue) cancel(key uploadKey) {
	j := u.byKey[key]
	if j == nil || j.stopped() {
		return
	}
	j.err = ErrUploadCancelled
	u.settle(j)
}

// settle finishes a job that has nothing left to wait for. Retries still
// scheduled do not hold a stopped job back: they are dropped when due.
func (u *uploadQueue) settle(j *uploadJob) {
	if j.inFlight > 0 || j.discarding {
		return
	}
	if !j.stopped() {
		if j.done == len(j.files) {
			u.remove(j)
			u.io.finish(j)
		}
		return
	}
	j.discarding = true
	blobs := make([]string, 0, len(j.landed))
	for _, f := range j.files {
		if j.landed[f.Blob] {
			blobs = append(blobs, f.Blob)
		}
	}
	u.io.discard(j, blobs)
}

// discarded finishes a stopped job once its blobs were deleted, but for
// leaked.
func (u *uploadQueue) discarded(key uploadKey, leaked []string) {
	j := u.byKey[key]
	if j == nil || !j.discarding {
		panic("barrier: discard result of a job not discarding")
	}
	j.leaked = leaked
	u.remove(j)
	u.io.finish(j)
}

func (u *uploadQueue) remove(j *uploadJob) {
	delete(u.byKey, j.key)
	for i, x := range u.jobs {
		if x == j {
			u.jobs = append(u.jobs[:i], u.jobs[i+1:]...)
			break
		}
	}
}
