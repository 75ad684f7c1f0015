package barrier_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/table"
)

// memBlobs is an in-memory BlobStore whose operations can be made to fail,
// land and fail (an ambiguous timeout), or block until released.
type memBlobs struct {
	mu     sync.Mutex
	blobs  map[string][]byte
	faults []*blobFault
}

// blobFault fails (or blocks) the operations it matches, Times times
// (0: forever).
type blobFault struct {
	op        string // "put", "get", "delete", "list"
	match     func(name string) bool
	transient bool
	land      bool          // a put stores the blob before failing
	block     chan struct{} // wait until closed, then succeed (a store that ignores cancellation)
	entered   chan string   // receives the name when a blocked call starts
	times     int
	hits      int
}

func newMemBlobs() *memBlobs { return &memBlobs{blobs: map[string][]byte{}} }

func (s *memBlobs) inject(f *blobFault) *blobFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
	return f
}

func (s *memBlobs) clearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

var errInjected = errors.New("injected fault")

// fault returns the fault matching op on name, counting the hit.
func (s *memBlobs) fault(op, name string) *blobFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.op != op || (f.match != nil && !f.match(name)) || (f.times > 0 && f.hits >= f.times) {
			continue
		}
		f.hits++
		return f
	}
	return nil
}

func (f *blobFault) err(op, name string) error {
	if f.transient {
		return barrier.TransientError(op, name, errInjected)
	}
	return barrier.PermanentError(op, name, errInjected)
}

func (s *memBlobs) Put(ctx context.Context, name string, r io.Reader) error {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.PermanentError("put", name, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return barrier.PermanentError("put", name, err)
	}
	f := s.fault("put", name)
	if f != nil && f.block != nil {
		if f.entered != nil {
			f.entered <- name
		}
		<-f.block
		f = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f != nil && !f.land {
		return f.err("put", name)
	}
	s.blobs[name] = data
	if f != nil {
		return f.err("put", name)
	}
	return nil
}

func (s *memBlobs) Get(_ context.Context, name string) (io.ReadCloser, error) {
	if f := s.fault("get", name); f != nil {
		return nil, f.err("get", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.blobs[name]
	if !ok {
		return nil, barrier.NotFoundError("get", name)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (s *memBlobs) Stat(_ context.Context, name string) (barrier.BlobInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.blobs[name]
	if !ok {
		return barrier.BlobInfo{}, barrier.NotFoundError("stat", name)
	}
	return barrier.BlobInfo{Name: name, Size: int64(len(data))}, nil
}

func (s *memBlobs) Delete(_ context.Context, name string) error {
	if f := s.fault("delete", name); f != nil {
		return f.err("delete", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.blobs, name)
	return nil
}

func (s *memBlobs) List(_ context.Context, prefix string) ([]barrier.BlobInfo, error) {
	if f := s.fault("list", prefix); f != nil {
		return nil, f.err("list", prefix)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []barrier.BlobInfo
	for n, d := range s.blobs {
		if strings.HasPrefix(n, prefix) {
			out = append(out, barrier.BlobInfo{Name: n, Size: int64(len(d))})
		}
	}
	slices.SortFunc(out, func(a, b barrier.BlobInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// names lists the stored blobs.
func (s *memBlobs) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.blobs {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// faultyFS is a local FileIO whose operations can be made to fail.
type faultyFS struct {
	table.FileIO
	mu     sync.Mutex
	faults map[string]func(path string) bool // op → which paths fail
	// created, when set, sees every file Create made and returns what the
	// caller gets; it runs outside the lock.
	created func(path string, w table.WritableFile) table.WritableFile
}

// onCreate sets (nil: removes) the created hook.
func (f *faultyFS) onCreate(hook func(path string, w table.WritableFile) table.WritableFile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = hook
}

func newFaultyFS() *faultyFS {
	return &faultyFS{FileIO: table.NewLocalFileIO(), faults: map[string]func(string) bool{}}
}

func (f *faultyFS) failOn(op string, match func(path string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if match == nil {
		delete(f.faults, op)
		return
	}
	f.faults[op] = match
}

func (f *faultyFS) check(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.faults[op]; m != nil && m(path) {
		return errInjected
	}
	return nil
}

func (f *faultyFS) Open(p string) (table.ReadableFile, error) {
	if err := f.check("open", p); err != nil {
		return nil, err
	}
	return f.FileIO.Open(p)
}

func (f *faultyFS) Create(p string) (table.WritableFile, error) {
	if err := f.check("create", p); err != nil {
		return nil, err
	}
	w, err := f.FileIO.Create(p)
	f.mu.Lock()
	hook := f.created
	f.mu.Unlock()
	if err != nil || hook == nil {
		return w, err
	}
	return hook(p, w), nil
}

func (f *faultyFS) Link(src, dst string) error {
	if err := f.check("link", dst); err != nil {
		return err
	}
	return f.FileIO.Link(src, dst)
}

func (f *faultyFS) List(p string) ([]string, error) {
	if err := f.check("list", p); err != nil {
		return nil, err
	}
	return f.FileIO.List(p)
}

func (f *faultyFS) Stat(p string) (int64, error) {
	if err := f.check("stat", p); err != nil {
		return 0, err
	}
	return f.FileIO.Stat(p)
}

func (f *faultyFS) RemoveAll(p string) error {
	if err := f.check("removeall", p); err != nil {
		return err
	}
	return f.FileIO.RemoveAll(p)
}
