package faultfs

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/lakestate/lakestate/table"
)

// Faults are the knobs of the injected faults. The zero value injects none.
type Faults struct {
	// SyncFailure is the probability that a file Sync fails with EIO.
	SyncFailure float64
	// Capacity is the number of bytes the files may hold in total (0: no
	// limit). A write past it returns ENOSPC.
	Capacity int64
}

// FS is the simulated filesystem. It is safe for concurrent use; a run is
// deterministic when its operations reach the FS in a deterministic order.
type FS struct {
	mu     sync.Mutex
	rng    *rand.Rand
	faults Faults
	epoch  int   // bumped by Crash; handles of an older epoch are dead
	used   int64 // bytes held, exact after usedBytes, an upper bound between
	open   map[*writable]struct{}

	names   map[string]*inode // what reads see
	durable map[string]*inode // what a crash keeps
	dirs    map[string]bool   // directories reads see
	durDirs map[string]bool   // directories a crash keeps
}

var _ table.FileIO = (*FS)(nil)

// New returns an empty filesystem drawing its faults from rng.
func New(rng *rand.Rand, f Faults) *FS {
	return &FS{
		rng:     rng,
		open:    map[*writable]struct{}{},
		faults:  f,
		names:   map[string]*inode{},
		durable: map[string]*inode{},
		dirs:    map[string]bool{},
		durDirs: map[string]bool{},
	}
}

// SetFaults replaces the fault knobs, e.g. to recover without faults.
func (f *FS) SetFaults(fl Faults) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = fl
}

func clean(p string) string { return path.Clean(p) }

// isRoot reports whether dir needs no entry: the filesystem's roots always exist.
func isRoot(dir string) bool { return dir == "/" || dir == "." }

func (f *FS) dirExists(dir string) bool { return isRoot(dir) || f.dirs[dir] }

// mkdirAll makes dir and its missing parents, durable at once.
func (f *FS) mkdirAll(dir string) error {
	for d := dir; !isRoot(d); d = path.Dir(d) {
		if _, isFile := f.names[d]; isFile {
			return &fs.PathError{Op: "mkdir", Path: d, Err: fs.ErrExist}
		}
		f.dirs[d] = true
		f.durDirs[d] = true
	}
	return nil
}

func notExist(op, p string) error { return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist} }

func (f *FS) lookup(op, p string) (*inode, error) {
	n, ok := f.names[p]
	if !ok {
		return nil, notExist(op, p)
	}
	return n, nil
}

// Open implements table.FileIO.
func (f *FS) Open(p string) (table.ReadableFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("open", clean(p))
	if err != nil {
		return nil, err
	}
	return &readable{fs: f, n: n}, nil
}

// ReadFile implements table.FileIO.
func (f *FS) ReadFile(p string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("read", clean(p))
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), n.data...), nil
}

// Create implements table.FileIO. Creating an existing name binds it to a
// new empty file; until SyncDir the old file is what a crash keeps.
func (f *FS) Create(p string) (table.WritableFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = clean(p)
	if f.dirs[p] {
		return nil, &fs.PathError{Op: "create", Path: p, Err: fs.ErrExist}
	}
	if err := f.mkdirAll(path.Dir(p)); err != nil {
		return nil, err
	}
	n := &inode{}
	f.names[p] = n
	w := &writable{fs: f, n: n, path: p, epoch: f.epoch}
	f.open[w] = struct{}{}
	return w, nil
}

// PublishExclusive implements table.FileIO.
func (f *FS) PublishExclusive(tmp, target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	tmp, target = clean(tmp), clean(target)
	n, err := f.lookup("publish", tmp)
	if err != nil {
		return err
	}
	if !f.dirExists(path.Dir(target)) {
		return notExist("publish", target)
	}
	delete(f.names, tmp)
	if _, exists := f.names[target]; exists || f.dirs[target] {
		return fmt.Errorf("publish %s: %w", target, fs.ErrExist)
	}
	f.names[target] = n
	return nil
}

// Rename implements table.FileIO.
func (f *FS) Rename(src, dst string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, dst = clean(src), clean(dst)
	n, err := f.lookup("rename", src)
	if err != nil {
		return err
	}
	if !f.dirExists(path.Dir(dst)) {
		return notExist("rename", dst)
	}
	if f.dirs[dst] {
		return &fs.PathError{Op: "rename", Path: dst, Err: fs.ErrExist}
	}
	delete(f.names, src)
	f.names[dst] = n
	return nil
}

// Link implements table.FileIO.
func (f *FS) Link(src, dst string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, dst = clean(src), clean(dst)
	n, err := f.lookup("link", src)
	if err != nil {
		return err
	}
	if _, exists := f.names[dst]; exists || f.dirs[dst] {
		return &fs.PathError{Op: "link", Path: dst, Err: fs.ErrExist}
	}
	if err := f.mkdirAll(path.Dir(dst)); err != nil {
		return err
	}
	f.names[dst] = n
	return nil
}

// Remove implements table.FileIO.
func (f *FS) Remove(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = clean(p)
	if f.dirs[p] {
		for name := range f.names {
			if path.Dir(name) == p {
				return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrInvalid}
			}
		}
		for d := range f.dirs {
			if path.Dir(d) == p {
				return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrInvalid}
			}
		}
		delete(f.dirs, p)
		return nil
	}
	delete(f.names, p)
	return nil
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// RemoveAll implements table.FileIO.
func (f *FS) RemoveAll(p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p = clean(p)
	for name := range f.names {
		if under(name, p) {
			delete(f.names, name)
		}
	}
	for d := range f.dirs {
		if under(d, p) {
			delete(f.dirs, d)
		}
	}
	return nil
}

// List implements table.FileIO.
func (f *FS) List(dir string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir = clean(dir)
	var out []string
	for name := range f.names {
		if path.Dir(name) == dir {
			out = append(out, path.Base(name))
		}
	}
	for d := range f.dirs {
		if path.Dir(d) == dir {
			out = append(out, path.Base(d))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Stat implements table.FileIO.
func (f *FS) Stat(p string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("stat", clean(p))
	if err != nil {
		return 0, err
	}
	return int64(len(n.data)), nil
}

// SyncDir implements table.FileIO: the names in dir, and the removal of
// names that were in it, become durable.
func (f *FS) SyncDir(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir = clean(dir)
	if !f.dirExists(dir) {
		return notExist("syncdir", dir)
	}
	for name := range f.durable {
		if inDir(name, dir) {
			delete(f.durable, name)
		}
	}
	for name, n := range f.names {
		if inDir(name, dir) {
			f.durable[name] = n
		}
	}
	for d := range f.durDirs {
		if inDir(d, dir) && !f.dirs[d] {
			f.forgetDurableTree(d)
		}
	}
	for d := range f.dirs {
		if inDir(d, dir) {
			f.durDirs[d] = true
		}
	}
	return nil
}

// inDir reports whether the clean path p is an entry of the clean directory
// dir (path.Dir(p) == dir), without path.Dir's allocation: SyncDir asks it
// of every name the filesystem holds.
func inDir(p, dir string) bool {
	switch {
	case dir == "/":
		return len(p) > 1 && p[0] == '/' && strings.IndexByte(p[1:], '/') < 0
	case dir == ".":
		return p != "." && p[0] != '/' && strings.IndexByte(p, '/') < 0
	}
	return len(p) > len(dir)+1 && p[len(dir)] == '/' && strings.HasPrefix(p, dir) && strings.IndexByte(p[len(dir)+1:], '/') < 0
}

// forgetDurableTree drops a removed directory and everything under it from
// what a crash keeps.
func (f *FS) forgetDurableTree(dir string) {
	for name := range f.durable {
		if under(name, dir) {
			delete(f.durable, name)
		}
	}
	for d := range f.durDirs {
		if under(d, dir) {
			delete(f.durDirs, d)
		}
	}
}
