package faultfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// inode is one file's content. Writes only append (Create starts a new
// inode), so the durable content is always the prefix data[:synced] and the
// unsynced writes are the spans after it.
type inode struct {
	data    []byte
	synced  int
	pending []span
	// syncFailed is set by a failed fsync: the durable state is unknown
	// from then on, so no later Sync may report success.
	syncFailed bool
}

type span struct{ off, len int }

var errStale = errors.New("file handle from before a crash")

// writable is a handle returned by Create.
type writable struct {
	fs     *FS
	n      *inode
	path   string
	epoch  int
	closed bool
}

func (w *writable) check(op string) error {
	if w.closed {
		return &fs.PathError{Op: op, Path: w.path, Err: fs.ErrClosed}
	}
	if w.epoch != w.fs.epoch {
		return &fs.PathError{Op: op, Path: w.path, Err: errStale}
	}
	return nil
}

func (w *writable) Write(p []byte) (int, error) {
	f := w.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := w.check("write"); err != nil {
		return 0, err
	}
	var full error
	if c := f.faults.Capacity; c > 0 && f.used+int64(len(p)) > c {
		f.used = f.usedBytes(w.n)
		if room := c - f.used; room < int64(len(p)) {
			p = p[:max(room, 0)]
			full = &fs.PathError{Op: "write", Path: w.path, Err: syscall.ENOSPC}
		}
	}
	if len(p) > 0 {
		w.n.pending = append(w.n.pending, span{off: len(w.n.data), len: len(p)})
		w.n.data = append(w.n.data, p...)
		f.used += int64(len(p))
	}
	return len(p), full
}

func (w *writable) Sync() error {
	f := w.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := w.check("sync"); err != nil {
		return err
	}
	if !w.n.syncFailed && f.faults.SyncFailure > 0 && f.rng.Float64() < f.faults.SyncFailure {
		w.n.syncFailed = true
	}
	if w.n.syncFailed {
		return &fs.PathError{Op: "sync", Path: w.path, Err: syscall.EIO}
	}
	w.n.synced = len(w.n.data)
	w.n.pending = nil
	return nil
}

func (w *writable) Close() error {
	f := w.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.closed {
		return &fs.PathError{Op: "close", Path: w.path, Err: fs.ErrClosed}
	}
	w.closed = true
	delete(f.open, w)
	return nil
}

// readable is a handle returned by Open; it reads the file's current content.
type readable struct {
	fs *FS
	n  *inode
}

func (r *readable) ReadAt(p []byte, off int64) (int, error) {
	r.fs.mu.Lock()
	defer r.fs.mu.Unlock()
	if off < 0 {
		return 0, fs.ErrInvalid
	}
	if off >= int64(len(r.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *readable) Size() int64 {
	r.fs.mu.Lock()
	defer r.fs.mu.Unlock()
	return int64(len(r.n.data))
}

func (r *readable) Close() error { return nil }
