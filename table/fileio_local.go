package table

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// LocalFileIO is the FileIO of a local POSIX filesystem.
//
// Directories are created lazily: Create and Link try the operation first and
// make the parent only when it is missing, so the steady state costs no mkdir.
// A directory this process created is remembered, and the parent of every
// directory it creates is synced so the new name survives a crash.
type LocalFileIO struct {
	mu      sync.Mutex
	ensured map[string]struct{}
}

// NewLocalFileIO returns a FileIO over the local filesystem.
func NewLocalFileIO() *LocalFileIO {
	return &LocalFileIO{ensured: make(map[string]struct{})}
}

var (
	_ FileIO           = (*LocalFileIO)(nil)
	_ SequentialOpener = (*LocalFileIO)(nil)
)

type localReadable struct {
	*os.File
	size int64
}

func (f localReadable) Size() int64 { return f.size }

// Open implements FileIO. Files of mapMinBytes and more are read through a
// mapping (mappedFile), smaller ones with pread.
func (l *LocalFileIO) Open(path string) (ReadableFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m, ok := mapFile(f, path, st.Size()); ok {
		return m, nil
	}
	return localReadable{File: f, size: st.Size()}, nil
}

// OpenSequential implements SequentialOpener.
func (l *LocalFileIO) OpenSequential(path string) (*os.File, error) { return os.Open(path) }

// ReadFile implements FileIO.
func (l *LocalFileIO) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Create implements FileIO.
func (l *LocalFileIO) Create(path string) (WritableFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = l.ensureDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ensureDir creates dir and its missing ancestors, syncing the parent of each
// directory it creates.
func (l *LocalFileIO) ensureDir(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ensureDirLocked(dir)
}

func (l *LocalFileIO) ensureDirLocked(dir string) error {
	if _, ok := l.ensured[dir]; ok {
		return nil
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		l.ensured[dir] = struct{}{}
		return nil
	case err == nil:
		return fmt.Errorf("mkdir %s: exists and is not a directory", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := l.ensureDirLocked(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	l.ensured[dir] = struct{}{}
	return nil
}

// PublishExclusive implements FileIO with link(2), which fails when target
// exists; where hard links are unsupported it falls back to
// renameat2(RENAME_NOREPLACE).
func (l *LocalFileIO) PublishExclusive(tmp, target string) error {
	err := os.Link(tmp, target)
	if err != nil && !errors.Is(err, fs.ErrExist) && linkUnsupported(err) {
		err = renameNoReplace(tmp, target)
		if err == nil {
			return nil
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			os.Remove(tmp)
			return fmt.Errorf("publish %s: %w", target, fs.ErrExist)
		}
		return err
	}
	return os.Remove(tmp)
}

// Rename implements FileIO.
func (l *LocalFileIO) Rename(src, dst string) error { return os.Rename(src, dst) }

// Link implements FileIO.
func (l *LocalFileIO) Link(src, dst string) error {
	err := os.Link(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(src); serr != nil {
			return err
		}
		if err = l.ensureDir(filepath.Dir(dst)); err != nil {
			return err
		}
		err = os.Link(src, dst)
	}
	return err
}

// Remove implements FileIO.
func (l *LocalFileIO) Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveAll implements FileIO.
func (l *LocalFileIO) RemoveAll(path string) error {
	l.mu.Lock()
	for d := range l.ensured {
		if d == path || strings.HasPrefix(d, path+string(filepath.Separator)) {
			delete(l.ensured, d)
		}
	}
	l.mu.Unlock()
	return os.RemoveAll(path)
}

// List implements FileIO.
func (l *LocalFileIO) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

// Stat implements FileIO.
func (l *LocalFileIO) Stat(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// SyncDir implements FileIO.
func (l *LocalFileIO) SyncDir(dir string) error { return syncDir(dir) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
