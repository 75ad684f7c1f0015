package faultblob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/lakestate/lakestate/barrier"
)

// Faults are the knobs of the injected faults. The zero value injects none.
type Faults struct {
	// Failure is the probability that an operation fails with a transient
	// error before it takes effect.
	Failure float64
	// Timeout is the probability that an operation times out: it returns a
	// transient error wrapping context.DeadlineExceeded.
	Timeout float64
	// Landed is the probability that a put or delete that timed out took
	// effect anyway.
	Landed float64
}

// ErrInjected is the cause of an injected transient failure.
var ErrInjected = errors.New("injected transient failure")

// Store is the simulated blob store. It is safe for concurrent use; a run is
// deterministic when its operations reach the store in a deterministic order.
type Store struct {
	mu      sync.Mutex
	rng     *rand.Rand
	faults  Faults
	onOp    func(op, name string)
	objects map[string][]byte
}

var _ barrier.BlobStore = (*Store)(nil)

// New returns an empty store drawing its faults from rng. onOp, if not nil,
// runs at the start of every operation (outside the store's lock) with the
// operation ("put", "get", "stat", "delete", "list") and the name or prefix.
func New(rng *rand.Rand, f Faults, onOp func(op, name string)) *Store {
	return &Store{rng: rng, faults: f, onOp: onOp, objects: map[string][]byte{}}
}

// SetFaults replaces the fault knobs.
func (s *Store) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Names returns the names of all stored blobs, sorted.
func (s *Store) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.objects))
	for name := range s.objects {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// begin runs the hook, checks the context and draws the operation's fate:
// whether it takes effect and the error it returns. The caller holds no
// lock; begin returns with s.mu held.
func (s *Store) begin(ctx context.Context, op, name string) (bool, error) {
	if s.onOp != nil {
		s.onOp(op, name)
	}
	s.mu.Lock()
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return false, barrier.TransientError(op, name, err)
		}
		return false, barrier.PermanentError(op, name, err)
	}
	f := s.faults
	if f.Failure > 0 && s.rng.Float64() < f.Failure {
		return false, barrier.TransientError(op, name, ErrInjected)
	}
	if f.Timeout > 0 && s.rng.Float64() < f.Timeout {
		landed := f.Landed > 0 && s.rng.Float64() < f.Landed
		return landed, barrier.TransientError(op, name, context.DeadlineExceeded)
	}
	return true, nil
}

// Put implements barrier.BlobStore.
func (s *Store) Put(ctx context.Context, name string, r io.Reader) error {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.PermanentError("put", name, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return barrier.PermanentError("put", name, err)
	}
	effect, err := s.begin(ctx, "put", name)
	defer s.mu.Unlock()
	if effect {
		s.objects[name] = data
	}
	return err
}

// Get implements barrier.BlobStore.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	_, err := s.begin(ctx, "get", name)
	defer s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	data, ok := s.objects[name]
	if !ok {
		return nil, barrier.NotFoundError("get", name)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// Stat implements barrier.BlobStore.
func (s *Store) Stat(ctx context.Context, name string) (barrier.BlobInfo, error) {
	_, err := s.begin(ctx, "stat", name)
	defer s.mu.Unlock()
	if err != nil {
		return barrier.BlobInfo{}, err
	}
	data, ok := s.objects[name]
	if !ok {
		return barrier.BlobInfo{}, barrier.NotFoundError("stat", name)
	}
	return barrier.BlobInfo{Name: name, Size: int64(len(data))}, nil
}

// Delete implements barrier.BlobStore.
func (s *Store) Delete(ctx context.Context, name string) error {
	effect, err := s.begin(ctx, "delete", name)
	defer s.mu.Unlock()
	if effect {
		delete(s.objects, name)
	}
	return err
}

// List implements barrier.BlobStore.
func (s *Store) List(ctx context.Context, prefix string) ([]barrier.BlobInfo, error) {
	_, err := s.begin(ctx, "list", prefix)
	defer s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []barrier.BlobInfo
	for name, data := range s.objects {
		if strings.HasPrefix(name, prefix) {
			out = append(out, barrier.BlobInfo{Name: name, Size: int64(len(data))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
