package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/sim/faultblob"
)

// Operators of the workload's job.
const (
	opSource = "source"
	opKeyed  = "keyed"
	opSink   = "sink"
)

// checker watches the messages between the checkpoint actors (through the
// taps and relays) and the blob store (through checkedBlobs) and records the
// first broken invariant of DESIGN.md it sees.
type checker struct {
	mu     sync.Mutex
	err    error
	step   uint64
	stepOf func() uint64

	subs map[subKey]*subCheck
	par  map[int]int // run → parallelism of keyed and sink
	meta map[barrier.CheckpointID]*metaDoc
	// maxCompleted is the newest checkpoint whose completion was delivered:
	// every later recovery must find it or a newer one.
	maxCompleted barrier.CheckpointID
	completed    map[barrier.CheckpointID]bool
}

type subKey struct {
	run int
	op  string
	idx int
}

// subCheck is what one subtask's Store actor did in one run.
type subCheck struct {
	barriers, synced, uploads, uploaded, acked map[barrier.CheckpointID]bool
	// bases are the checkpoints the store may reuse files of: those it
	// acknowledged whose completion reached it, and the checkpoint an aligned
	// restore adopted.
	bases map[barrier.CheckpointID]bool
}

// metaDoc is what a checkpoint's metadata references.
type metaDoc struct {
	name  string
	blobs map[string]bool
	keys  map[barrier.FileKey]bool
}

func newChecker(stepOf func() uint64) *checker {
	return &checker{stepOf: stepOf, subs: map[subKey]*subCheck{}, par: map[int]int{}, meta: map[barrier.CheckpointID]*metaDoc{},
		completed: map[barrier.CheckpointID]bool{}}
}

// fail records a violation; the first one is the run's failure.
func (c *checker) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(err)
}

func (c *checker) failLocked(err error) {
	if c.err == nil {
		c.err, c.step = err, c.stepOf()
	}
}

func (c *checker) failed() (error, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err, c.step
}

func (c *checker) sub(run int, op string, idx int) *subCheck {
	k := subKey{run, op, idx}
	s := c.subs[k]
	if s == nil {
		s = &subCheck{barriers: map[barrier.CheckpointID]bool{}, synced: map[barrier.CheckpointID]bool{}, uploads: map[barrier.CheckpointID]bool{},
			uploaded: map[barrier.CheckpointID]bool{}, acked: map[barrier.CheckpointID]bool{}, bases: map[barrier.CheckpointID]bool{}}
		c.subs[k] = s
	}
	return s
}

// startRun declares a run's parallelism and, for an aligned restore, the
// checkpoint each keyed subtask adopted.
func (c *checker) startRun(run, p int, adopted map[int]barrier.CheckpointID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.par[run] = p
	for idx, id := range adopted {
		c.sub(run, opKeyed, idx).bases[id] = true
	}
}

// recovered checks that a recovery found the newest completed checkpoint.
func (c *checker) recovered(latest *barrier.Metadata) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxCompleted == 0 {
		return
	}
	if latest == nil {
		c.failLocked(fmt.Errorf("nothing lost: recovery found no checkpoint, but checkpoint %d completed", c.maxCompleted))
	} else if latest.ID < c.maxCompleted {
		c.failLocked(fmt.Errorf("nothing lost: recovery found checkpoint %d, but checkpoint %d completed", latest.ID, c.maxCompleted))
	}
}

func (c *checker) barrierSent(run int, op string, idx int, id barrier.CheckpointID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sub(run, op, idx).barriers[id] = true
}

func (c *checker) syncDone(run int, op string, idx int, id barrier.CheckpointID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sub(run, op, idx)
	switch {
	case !s.barriers[id]:
		c.failLocked(fmt.Errorf("phase order: %s/%d got SyncDone(%d) without Barrier(%d)", op, idx, id, id))
	case s.synced[id]:
		c.failLocked(fmt.Errorf("phase order: %s/%d got SyncDone(%d) twice", op, idx, id))
	}
	s.synced[id] = true
}

func (c *checker) upload(run int, op string, idx int, m *barrier.Upload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sub(run, op, idx)
	switch {
	case !s.barriers[m.ID]:
		c.failLocked(fmt.Errorf("phase order: %s/%d started the upload of checkpoint %d before its sync phase", op, idx, m.ID))
	case s.acked[m.ID]:
		c.failLocked(fmt.Errorf("phase order: %s/%d uploads checkpoint %d after acknowledging it", op, idx, m.ID))
	}
	s.uploads[m.ID] = true
}

func (c *checker) uploadDone(run int, op string, idx int, m *barrier.UploadDone) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sub(run, op, idx)
	if !s.uploads[m.ID] {
		c.failLocked(fmt.Errorf("phase order: %s/%d heard UploadDone(%d) of an upload never asked for", op, idx, m.ID))
	}
	if m.Err == nil {
		s.uploaded[m.ID] = true
	}
}

func (c *checker) ack(run int, op string, idx int, m *barrier.Ack) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sub(run, op, idx)
	if !s.uploaded[m.ID] {
		c.failLocked(fmt.Errorf("phase order: %s/%d acknowledged checkpoint %d before its upload succeeded", op, idx, m.ID))
	}
	st := m.State
	for _, t := range st.Tables {
		for _, f := range t.Files {
			if f.Uploaded {
				continue
			}
			k := st.FileKey(t.Name, f)
			if !c.reusable(s, k) {
				c.failLocked(fmt.Errorf("reuse: %s/%d checkpoint %d references %s, which no checkpoint confirmed to it registered", op, idx, m.ID, k))
			}
		}
	}
	s.acked[m.ID] = true
}

// declineTarget names a subtask of run that has not acknowledged checkpoint
// id while some keyed subtask has: a decline from it aborts a checkpoint
// that already registered reused files, the abort the reuse rule is most
// fragile under.
func (c *checker) declineTarget(run int, id barrier.CheckpointID) (string, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.par[run]
	keyedAcked := false
	for i := range p {
		keyedAcked = keyedAcked || c.sub(run, opKeyed, i).acked[id]
	}
	if !keyedAcked {
		return "", 0, false
	}
	for _, o := range []string{opSource, opKeyed, opSink} {
		n := p
		if o == opSource {
			n = 1
		}
		for i := range n {
			if !c.sub(run, o, i).acked[id] {
				return o, i, true
			}
		}
	}
	return "", 0, false
}

func (c *checker) reusable(s *subCheck, k barrier.FileKey) bool {
	for id := range s.bases {
		if d := c.meta[id]; d != nil && d.keys[k] {
			return true
		}
	}
	return false
}

// completeDelivered checks a Complete notification as a relay delivers it.
func (c *checker) completeDelivered(run int, op string, idx int, m *barrier.Complete) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.par[run]
	for _, o := range []string{opSource, opKeyed, opSink} {
		n := p
		if o == opSource {
			n = 1
		}
		for i := range n {
			if !c.sub(run, o, i).acked[m.ID] {
				c.failLocked(fmt.Errorf("phase order: Complete(%d) reached %s/%d before %s/%d acknowledged", m.ID, op, idx, o, i))
			}
		}
	}
	if d := c.meta[m.ID]; d == nil || d.name != m.Metadata {
		c.failLocked(fmt.Errorf("phase order: Complete(%d) names metadata %q that was never written", m.ID, m.Metadata))
	}
	if m.Kind != barrier.KindCheckpoint {
		return // a savepoint is never a reuse base, nor what a recovery restores
	}
	s := c.sub(run, op, idx)
	if s.acked[m.ID] {
		s.bases[m.ID] = true
	}
	c.maxCompleted = max(c.maxCompleted, m.ID)
	c.completed[m.ID] = true
}

// completedCount is the number of checkpoints whose completion was
// delivered somewhere.
func (c *checker) completedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.completed)
}

// checkedBlobs wraps the simulated blob store: it checks that no blob a
// readable metadata names is ever deleted and that metadata names only
// blobs that exist, and it counts the faults the store injects.
type checkedBlobs struct {
	inner *faultblob.Store
	env   *env
	mu    sync.Mutex
	docs  map[string]*metaDoc // metadata blob → what it references
}

func (b *checkedBlobs) countErr(err error) error {
	switch {
	case err == nil:
	case errors.Is(err, faultblob.ErrInjected):
		b.env.count(FaultUploadFail)
	case errors.Is(err, context.DeadlineExceeded):
		b.env.count(FaultUploadAmbiguous)
	}
	return err
}

func (b *checkedBlobs) nameSet() map[string]bool {
	set := map[string]bool{}
	for _, n := range b.inner.Names() {
		set[n] = true
	}
	return set
}

func (b *checkedBlobs) Put(ctx context.Context, name string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if _, id, ok := barrier.ParseMetadataBlobName(name); ok {
		m, err := barrier.DecodeMetadata(name, data)
		if err != nil {
			b.env.check.fail(fmt.Errorf("metadata: the coordinator wrote %s that does not decode: %w", name, err))
		} else {
			doc := &metaDoc{name: name, blobs: map[string]bool{}, keys: map[barrier.FileKey]bool{}}
			for _, o := range m.Operators {
				for i := range o.Subtasks {
					o.Subtasks[i].Files(func(k barrier.FileKey, f barrier.FileRef) {
						doc.keys[k] = true
						doc.blobs[f.Blob] = true
					})
				}
			}
			names := b.nameSet()
			for _, blob := range sortedKeys(doc.blobs) {
				if !names[blob] {
					b.env.check.fail(fmt.Errorf("nothing lost: metadata of checkpoint %d names %s, which the blob store does not hold", id, blob))
				}
			}
			b.mu.Lock()
			b.docs[name] = doc
			b.mu.Unlock()
			b.env.check.mu.Lock()
			b.env.check.meta[id] = doc
			b.env.check.mu.Unlock()
		}
	}
	return b.countErr(b.inner.Put(ctx, name, bytes.NewReader(data)))
}

func (b *checkedBlobs) Delete(ctx context.Context, name string) error {
	_, _, isMeta := barrier.ParseMetadataBlobName(name)
	if !isMeta {
		b.mu.Lock()
		var namedBy []string
		for _, mn := range sortedKeys(b.docs) {
			if b.docs[mn].blobs[name] {
				namedBy = append(namedBy, mn)
			}
		}
		b.mu.Unlock()
		if len(namedBy) > 0 {
			names := b.nameSet()
			for _, mn := range namedBy {
				if names[mn] {
					b.env.check.fail(fmt.Errorf("nothing lost: %s deleted while the readable metadata %s names it", name, mn))
				}
			}
		}
	}
	err := b.countErr(b.inner.Delete(ctx, name))
	if isMeta && err == nil {
		// Gone for good: it names nothing any more.
		b.mu.Lock()
		delete(b.docs, name)
		b.mu.Unlock()
	}
	return err
}

func (b *checkedBlobs) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := b.inner.Get(ctx, name)
	return r, b.countErr(err)
}

func (b *checkedBlobs) Stat(ctx context.Context, name string) (barrier.BlobInfo, error) {
	i, err := b.inner.Stat(ctx, name)
	return i, b.countErr(err)
}

func (b *checkedBlobs) List(ctx context.Context, prefix string) ([]barrier.BlobInfo, error) {
	l, err := b.inner.List(ctx, prefix)
	return l, b.countErr(err)
}

func sortedKeys[K interface{ ~string }, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
