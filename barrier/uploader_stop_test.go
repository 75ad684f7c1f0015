package barrier

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// heldPuts holds its first put until the put's context is cancelled (or
// release closes), and counts every put that reached it.
type heldPuts struct {
	discardBlobs
	once             sync.Once
	entered, release chan struct{}
	puts             atomic.Int32
	cancelled        atomic.Bool
}

func (h *heldPuts) Put(ctx context.Context, name string, r io.Reader) error {
	h.puts.Add(1)
	held := false
	h.once.Do(func() { held = true })
	if held {
		close(h.entered)
		select {
		case <-ctx.Done():
			h.cancelled.Store(true)
			return ctx.Err()
		case <-h.release:
		}
	}
	_, err := io.Copy(io.Discard, r)
	return err
}

// An uploader that stops interrupts its puts in flight and starts none of
// those still queued, and its jobs fence tells when the running ones ended:
// after a failover nothing of a stopped run's upload may land in the blob
// store once the next run's coordinator has swept it for orphans. One
// executor slot: the first put runs (held), the second waits behind it.
func TestStoppedUploaderPutsNothingMore(t *testing.T) {
	sys := actors.NewSystem(actors.Options{ExecutorLimit: 1})
	defer sys.Close()
	p, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	blobs := &heldPuts{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(blobs.release)
	jobs := &actors.JobFence{}
	pid, err := sys.Spawn("uploader", NewUploader(sys, UploaderConfig{Blobs: blobs, Parallelism: 2, Jobs: jobs}))
	if err != nil {
		t.Fatal(err)
	}
	p.Watch(pid)
	sys.Send(pid, &Upload{ID: 1, ReplyTo: p.PID(), Files: []UploadFile{
		{Blob: "shared/chk-1/a", Data: [][]byte{[]byte("a")}, Size: 1},
		{Blob: "shared/chk-1/b", Data: [][]byte{[]byte("b")}, Size: 1},
	}})
	<-blobs.entered
	sys.Stop(pid)
	for {
		m, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if term, ok := m.(*actor.Terminated); ok && term.Who.Equal(pid) {
			break
		}
	}
	select {
	case <-jobs.Done():
	case <-time.After(time.Minute):
		t.Fatal("the stopped uploader's put in flight never ended")
	}
	if !blobs.cancelled.Load() {
		t.Fatal("the put in flight was not interrupted by the stop")
	}
	// The queued put's turn comes after the held one: once a job queued
	// behind it ran, it has had its turn.
	sys.Executor().Submit(p.PID(), func() any { return &Drained{} })
	if _, err := actors.Expect[*Drained](p); err != nil {
		t.Fatal(err)
	}
	if n := blobs.puts.Load(); n != 1 {
		t.Fatalf("%d puts reached the blob store, want only the one in flight at the stop", n)
	}
}
