package jobs_test

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/lakestate/lakestate/barrier"
)

// memBlobs is an in-memory blob store: the tests' checkpoints skip the
// local directory store's fsyncs, which dominate their time on a busy disk.
type memBlobs struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

func newMemBlobs() *memBlobs { return &memBlobs{blobs: map[string][]byte{}} }

func (m *memBlobs) Put(_ context.Context, name string, r io.Reader) error {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.PermanentError("put", name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return barrier.TransientError("put", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[name] = b
	return nil
}

func (m *memBlobs) Get(_ context.Context, name string) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok {
		return nil, barrier.NotFoundError("get", name)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (m *memBlobs) Stat(_ context.Context, name string) (barrier.BlobInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[name]
	if !ok {
		return barrier.BlobInfo{}, barrier.NotFoundError("stat", name)
	}
	return barrier.BlobInfo{Name: name, Size: int64(len(b))}, nil
}

func (m *memBlobs) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, name)
	return nil
}

func (m *memBlobs) List(_ context.Context, prefix string) ([]barrier.BlobInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []barrier.BlobInfo
	for n, b := range m.blobs {
		if strings.HasPrefix(n, prefix) {
			out = append(out, barrier.BlobInfo{Name: n, Size: int64(len(b))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
