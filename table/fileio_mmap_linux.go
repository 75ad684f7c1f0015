package table

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"
)

// mapMinBytes is the size from which LocalFileIO reads a file through a
// mapping. A probe reads a few small pieces of a data file per key; through
// a mapping each is a copy instead of a pread system call, which cost about
// half of a probe's CPU on files of the page cache. Smaller files are read
// whole or rarely: a mapping would only add mmap and munmap calls.
const mapMinBytes = 256 << 10

// mappedFile is a local file read through a read-only shared mapping of the
// size it had when opened. Data files are immutable once written, but a file
// shrunk under its mapping (truncated, or rewritten in place by another
// writer) raises SIGBUS on access of the lost pages: ReadAt turns that fault
// into an error naming the file, as a short pread would be.
type mappedFile struct {
	path string
	mu   sync.RWMutex // Close waits for reads in progress
	data []byte       // nil once closed
}

// mapFile maps f (of size bytes) and closes it; ok is false, and f left
// open, when the file is small or the mapping fails.
func mapFile(f *os.File, path string, size int64) (_ *mappedFile, ok bool) {
	if size < mapMinBytes {
		return nil, false
	}
	return mapWhole(f, path, size)
}

// mapWhole is mapFile of a file of any size above 0.
func mapWhole(f *os.File, path string, size int64) (_ *mappedFile, ok bool) {
	if size <= 0 || size != int64(int(size)) {
		return nil, false
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	f.Close() // the mapping keeps the file
	return &mappedFile{path: path, data: data}, true
}

// ReadAt implements io.ReaderAt.
func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	switch {
	case m.data == nil:
		return 0, &fs.PathError{Op: "read", Path: m.path, Err: fs.ErrClosed}
	case off < 0:
		return 0, &fs.PathError{Op: "read", Path: m.path, Err: errors.New("negative offset")}
	case off >= int64(len(m.data)):
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n, err := m.copyAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// copyAt copies the mapping from off into p, recovering from a fault of a
// page the file no longer has.
func (m *mappedFile) copyAt(p []byte, off int64) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		n, err = 0, &fs.PathError{Op: "read", Path: m.path, Err: fmt.Errorf("fault at offset %d of a %d-byte mapping (file shrunk since open?): %v", off, len(m.data), r)}
	}()
	return copy(p, m.data[off:]), nil
}

// Size is the file's size when opened.
func (m *mappedFile) Size() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.data))
}

// Close unmaps the file once no read is in progress.
func (m *mappedFile) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		return &fs.PathError{Op: "close", Path: m.path, Err: fs.ErrClosed}
	}
	err := unix.Munmap(m.data)
	m.data = nil
	if err != nil {
		return &fs.PathError{Op: "munmap", Path: m.path, Err: err}
	}
	return nil
}

// touch implements memoryFile.
func (m *mappedFile) touch(offs []int64) (x byte) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			// a lost page: the read that wants it reports the error
		}
	}()
	n := int64(len(m.data))
	for _, o := range offs {
		if o >= 0 && o < n {
			x += m.data[o]
		}
	}
	return x
}

// readsAreCopies says whether reads of f copy from memory (a mapped file)
// rather than make a system call each: then two small reads cost less than
// one of the bytes between them too.
func readsAreCopies(f ReadableFile) bool {
	_, ok := f.(*mappedFile)
	return ok
}
