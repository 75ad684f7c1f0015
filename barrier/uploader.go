package barrier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// Upload asks the Uploader to put a checkpoint's files into the blob store.
// The answer, *UploadDone, goes to ReplyTo, which also names the upload
// (with ID) for CancelUpload.
type Upload struct {
	ID      CheckpointID
	Files   []UploadFile
	ReplyTo *actor.PID
}

func (m *Upload) Trace() string { return fmt.Sprintf("id=%d files=%d", m.ID, len(m.Files)) }

// UploadDone reports the outcome of an Upload. On failure (Err set) every
// blob the upload may have put was deleted first, except those in Leaked
// (their deletion failed too; the Store actor hands them to the coordinator
// with its Decline).
type UploadDone struct {
	ID      CheckpointID
	Bytes   int64 // bytes uploaded (successful puts)
	Retries int
	Err     error
	Leaked  []string
}

func (m *UploadDone) Trace() string {
	return fmt.Sprintf("id=%d bytes=%d retries=%d err=%v leaked=%d", m.ID, m.Bytes, m.Retries, m.Err, len(m.Leaked))
}

// CancelUpload stops the upload of checkpoint ID that ReplyTo asked for:
// no further put starts, and what may have landed is deleted before
// *UploadDone (with ErrUploadCancelled) is sent. Cancelling a finished upload
// does nothing.
type CancelUpload struct {
	ID      CheckpointID
	ReplyTo *actor.PID
}

func (m *CancelUpload) Trace() string { return fmt.Sprintf("id=%d", m.ID) }

// UploaderConfig configures an Uploader.
type UploaderConfig struct {
	Blobs BlobStore
	// FileIO reads the local sources of uploads.
	FileIO table.FileIO
	// Parallelism bounds the puts in flight over all uploads (default 4).
	Parallelism int
	Retry       RetryPolicy
	// Jobs, when set, runs the uploader's executor jobs (puts, deletions
	// of a failed upload's blobs) and is closed when the uploader stops: a
	// job not started by then never runs, and Done tells when the running
	// ones ended. Whoever lists the blob store for orphans after a failover
	// (a restarted coordinator) waits for it first, or a stopped upload's
	// blob could land after the sweep.
	Jobs *actors.JobFence
}

// Uploader is the actor that runs checkpoint uploads (the async phase):
// puts on the system's executor, bounded in number, transient failures
// retried after a backoff that the clock delivers as a message, and a clear
// failure once a file exhausts its attempts. A failed or cancelled upload
// deletes what it may have put before it reports.
type Uploader struct {
	cfg   UploaderConfig
	sys   *actors.System
	ctx   actor.Context // the context of the message being handled
	state *uploadQueue
	// owners maps uploads to the PIDs that receive UploadDone; puts holds
	// each upload's context, cancelled to interrupt its puts in flight.
	owners map[uploadKey]*actor.PID
	puts   map[uploadKey]putContext
	idle   []*actor.PID
}

type putContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// NewUploader returns the producer of an Uploader actor. It serves one
// spawn: what a supervisor's restart after a panic gets is an actor that
// stops at once (only the lost instance knew the uploads in flight and
// their owners, who would wait for their answers in vain), so the job
// fails over.
func NewUploader(sys *actors.System, cfg UploaderConfig) actor.Producer {
	if cfg.Jobs == nil {
		cfg.Jobs = &actors.JobFence{}
	}
	return oneSpawn(sys, func() actor.Actor {
		return &Uploader{cfg: cfg, sys: sys, owners: map[uploadKey]*actor.PID{}, puts: map[uploadKey]putContext{}}
	}, "uploader restarted after a panic; it stops so that the job fails over")
}

// errUploaderStopped: the uploader stopped before the job started.
var errUploaderStopped = errors.New("uploader stopped before the put started")

// Messages the Uploader sends itself.
type (
	putResult struct {
		key     uploadKey
		file    int
		attempt int
		err     error
	}
	putRetry struct {
		key  uploadKey
		file int
	}
	discardResult struct {
		key    uploadKey
		leaked []string
	}
)

func (m *putResult) Trace() string {
	return fmt.Sprintf("id=%d file=%d attempt=%d err=%v", m.key.id, m.file, m.attempt, m.err)
}
func (m *putRetry) Trace() string { return fmt.Sprintf("id=%d file=%d", m.key.id, m.file) }
func (m *discardResult) Trace() string {
	return fmt.Sprintf("id=%d leaked=%d", m.key.id, len(m.leaked))
}

func (u *Uploader) Receive(ctx actor.Context) {
	u.ctx = ctx
	defer func() { u.ctx = nil }()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		u.state = newUploadQueue(u, u.cfg.Parallelism, u.cfg.Retry, u.sys.Rand(ctx.Self().Id))
	case *actor.Stopping, *actor.Restarting:
		// The puts not started never start and those in flight are
		// interrupted (in that order: an interrupted put frees its
		// executor slot for the next): after a failover nothing of this
		// uploader may land in the blob store once its jobs fence is
		// done.
		u.cfg.Jobs.Close(func() error { return nil })
		for _, p := range u.puts {
			p.cancel()
		}
	case *Upload:
		key := uploadKey{owner: m.ReplyTo.String(), id: m.ID}
		if _, dup := u.owners[key]; dup {
			ctx.Send(m.ReplyTo, &UploadDone{ID: m.ID, Err: fmt.Errorf("upload of checkpoint %d is already running", m.ID)})
			return
		}
		c, cancel := context.WithCancel(context.Background())
		u.owners[key], u.puts[key] = m.ReplyTo, putContext{c, cancel}
		if err := u.state.add(key, m.Files); err != nil {
			panic("barrier: " + err.Error()) // owners refused duplicates already
		}
	case *CancelUpload:
		key := uploadKey{owner: m.ReplyTo.String(), id: m.ID}
		if p, ok := u.puts[key]; ok {
			p.cancel()
		}
		u.state.cancel(key)
	case *putResult:
		u.state.putDone(m.key, m.file, m.attempt, m.err)
	case *putRetry:
		u.state.retryDue(m.key, m.file)
	case *discardResult:
		u.state.discarded(m.key, m.leaked)
	case *Drain:
		if ctx.Sender() != nil {
			u.idle = append(u.idle, ctx.Sender())
		}
	}
	if len(u.owners) == 0 {
		for _, to := range u.idle {
			ctx.Send(to, &Drained{})
		}
		u.idle = nil
	}
}

func (u *Uploader) put(j *uploadJob, i, attempt int) {
	f := j.files[i]
	key, blobs, fio, c, jobs := j.key, u.cfg.Blobs, u.cfg.FileIO, u.puts[j.key].ctx, u.cfg.Jobs
	u.sys.Executor().Submit(u.ctx.Self(), func() any {
		m := &putResult{key: key, file: i, attempt: attempt, err: errUploaderStopped}
		jobs.Run(func() { m.err = putFile(c, blobs, fio, f) })
		return m
	})
}

// putFile uploads one file from its local source or its in-memory content.
// A source the FileIO opens as an *os.File goes to the store as one, limited
// to the expected size, so a store of local files can have the kernel copy
// it; any other source is read at offsets through Open.
func putFile(ctx context.Context, blobs BlobStore, fio table.FileIO, f UploadFile) error {
	if f.Source == "" {
		if len(f.Data) == 1 {
			return blobs.Put(ctx, f.Blob, bytes.NewReader(f.Data[0]))
		}
		parts := make([]io.Reader, len(f.Data))
		for i, b := range f.Data {
			parts[i] = bytes.NewReader(b)
		}
		return blobs.Put(ctx, f.Blob, io.MultiReader(parts...))
	}
	if so, ok := fio.(table.SequentialOpener); ok {
		return putSequential(ctx, blobs, so, f)
	}
	src, err := fio.Open(f.Source)
	if err != nil {
		return PermanentError("put", f.Blob, fmt.Errorf("open source %s: %w", f.Source, err))
	}
	defer src.Close()
	if err := checkSourceSize(f, src.Size()); err != nil {
		return err
	}
	return blobs.Put(ctx, f.Blob, io.NewSectionReader(src, 0, f.Size))
}

func putSequential(ctx context.Context, blobs BlobStore, so table.SequentialOpener, f UploadFile) error {
	src, err := so.OpenSequential(f.Source)
	if err != nil {
		return PermanentError("put", f.Blob, fmt.Errorf("open source %s: %w", f.Source, err))
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return PermanentError("put", f.Blob, fmt.Errorf("stat source %s: %w", f.Source, err))
	}
	if err := checkSourceSize(f, st.Size()); err != nil {
		return err
	}
	return blobs.Put(ctx, f.Blob, io.LimitReader(src, f.Size))
}

func checkSourceSize(f UploadFile, size int64) error {
	if size != f.Size {
		return PermanentError("put", f.Blob, fmt.Errorf("source %s has %d bytes, the checkpoint expects %d", f.Source, size, f.Size))
	}
	return nil
}

func (u *Uploader) retryAfter(d time.Duration, j *uploadJob, i int) {
	u.sys.Clock().SendAfter(d, u.ctx.Self(), &putRetry{key: j.key, file: i})
}

func (u *Uploader) discard(j *uploadJob, blobs []string) {
	key, store, jobs := j.key, u.cfg.Blobs, u.cfg.Jobs
	u.sys.Executor().Submit(u.ctx.Self(), func() any {
		m := &discardResult{key: key, leaked: blobs}
		jobs.Run(func() { m.leaked = deleteBlobs(store, blobs, 3) })
		return m
	})
}

func (u *Uploader) finish(j *uploadJob) {
	owner := u.owners[j.key]
	u.puts[j.key].cancel()
	delete(u.owners, j.key)
	delete(u.puts, j.key)
	u.ctx.Send(owner, &UploadDone{ID: j.key.id, Bytes: j.bytes, Retries: j.retries, Err: j.err, Leaked: j.leaked})
}

// deleteBlobs deletes blobs in order, trying each up to attempts times while
// the failure is transient, and returns those it could not delete. It runs
// on the executor.
func deleteBlobs(store BlobStore, blobs []string, attempts int) []string {
	var leaked []string
	for _, b := range blobs {
		var err error
		for a := 0; a < attempts; a++ {
			if err = store.Delete(context.Background(), b); err == nil || !IsTransient(err) {
				break
			}
		}
		if err != nil {
			leaked = append(leaked, b)
		}
	}
	return leaked
}
