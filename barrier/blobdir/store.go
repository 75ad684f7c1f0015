package blobdir

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lakestate/lakestate/barrier"
)

// Store is a barrier.BlobStore over a local directory.
type Store struct {
	root string // absolute, OS-specific
	tmp  string // root/.tmp
}

var _ barrier.BlobStore = (*Store)(nil)

// Open returns a Store rooted at dir, creating dir if needed.
func Open(dir string) (*Store, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{root: root, tmp: filepath.Join(root, barrier.TempPrefix)}
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// staleTempAge is how long a temporary file must have gone unmodified before
// RemoveStaleTemporaries takes it for the leftover of a put that crashed. A
// put in progress writes continuously; one idle this long is not coming back.
const staleTempAge = 15 * time.Minute

// RemoveStaleTemporaries deletes the temporary files of puts that never
// finished (the process died between create and rename) and were last
// modified staleTempAge or more before now. Nothing refers to them, and
// without this each crash would leak one per put in flight. The owner of the
// store calls it when it starts, with its clock's now; a reader such as an
// inspection never does.
func (s *Store) RemoveStaleTemporaries(now time.Time) error {
	before := now.Add(-staleTempAge)
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() && info.ModTime().Before(before) {
			if err := os.Remove(filepath.Join(s.tmp, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// Root is the directory the store keeps its blobs in.
func (s *Store) Root() string { return s.root }

func (s *Store) file(name string) string { return filepath.Join(s.root, filepath.FromSlash(name)) }

// Put implements barrier.BlobStore.
func (s *Store) Put(ctx context.Context, name string, r io.Reader) error {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.PermanentError("put", name, err)
	}
	if err := ctx.Err(); err != nil {
		return classify("put", name, err)
	}
	tmp, err := s.writeTemp(ctx, r)
	if err != nil {
		return classify("put", name, err)
	}
	if err := s.publish(tmp, name); err != nil {
		_ = os.Remove(tmp)
		return classify("put", name, err)
	}
	return nil
}

// writeTemp copies r into a synced temporary file and returns its path.
func (s *Store) writeTemp(ctx context.Context, r io.Reader) (string, error) {
	f, err := os.CreateTemp(s.tmp, "put-")
	if err != nil {
		return "", err
	}
	err = copyInto(ctx, f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// publish renames tmp into place as name and makes the rename durable. A
// concurrent Delete may remove the (then empty) target directory between
// creating it and renaming into it, so a missing directory is retried.
func (s *Store) publish(tmp, name string) error {
	target := s.file(name)
	dir := filepath.Dir(target)
	for attempt := 0; ; attempt++ {
		err := s.ensureDir(dir)
		if err == nil {
			if err = os.Rename(tmp, target); err == nil {
				return syncDir(dir)
			}
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return err
		}
	}
}

// ensureDir creates dir and any missing parents below the root, syncing the
// parent of each directory it creates so the new names survive a crash.
func (s *Store) ensureDir(dir string) error {
	if dir == s.root {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errNotDir}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if err := s.ensureDir(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

var errNotDir = errors.New("not a directory")

// missingAsNotExist maps ENOTDIR (a path element is a blob, so no blob can
// live below it) to fs.ErrNotExist, keeping the path in the error.
func missingAsNotExist(err error) error {
	var pe *fs.PathError
	if errors.Is(err, syscall.ENOTDIR) && errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: fs.ErrNotExist}
	}
	return err
}

// Get implements barrier.BlobStore.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := barrier.ValidBlobName(name); err != nil {
		return nil, barrier.PermanentError("get", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, classify("get", name, err)
	}
	f, err := os.Open(s.file(name))
	if err != nil {
		return nil, classify("get", name, missingAsNotExist(err))
	}
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		_ = f.Close()
		if err == nil {
			err = fs.ErrNotExist // a directory is a name prefix, not a blob
		}
		return nil, classify("get", name, err)
	}
	return f, nil
}

// Stat implements barrier.BlobStore.
func (s *Store) Stat(ctx context.Context, name string) (barrier.BlobInfo, error) {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.BlobInfo{}, barrier.PermanentError("stat", name, err)
	}
	if err := ctx.Err(); err != nil {
		return barrier.BlobInfo{}, classify("stat", name, err)
	}
	fi, err := os.Stat(s.file(name))
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return barrier.BlobInfo{}, classify("stat", name, missingAsNotExist(err))
	}
	return barrier.BlobInfo{Name: name, Size: fi.Size()}, nil
}

// Delete implements barrier.BlobStore. Directories left empty are removed up
// to the root, so deleted checkpoints leave no directory litter.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := barrier.ValidBlobName(name); err != nil {
		return barrier.PermanentError("delete", name, err)
	}
	if err := ctx.Err(); err != nil {
		return classify("delete", name, err)
	}
	target := s.file(name)
	if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
		return nil // a name prefix, not a blob: nothing to delete
	}
	err := os.Remove(target)
	if errors.Is(missingAsNotExist(err), fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return classify("delete", name, err)
	}
	dir := filepath.Dir(target)
	if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classify("delete", name, err)
	}
	s.pruneEmptyDirs(dir)
	return nil
}

// pruneEmptyDirs removes dir and its parents below the root while they are
// empty. Failure only leaves an empty directory behind, so it is ignored.
func (s *Store) pruneEmptyDirs(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if os.Remove(dir) != nil { // fails when not empty
			return
		}
		dir = filepath.Dir(dir)
	}
}

// List implements barrier.BlobStore.
func (s *Store) List(ctx context.Context, prefix string) ([]barrier.BlobInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, classify("list", prefix, err)
	}
	// Walk the deepest directory the prefix names completely.
	start := s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if barrier.ValidBlobName(prefix[:i]) != nil {
			return nil, nil // no blob name can start with this prefix
		}
		start = s.file(prefix[:i])
	}
	var out []barrier.BlobInfo
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // vanished under a concurrent delete, or no such prefix
			}
			return err
		}
		if p == s.tmp {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, barrier.BlobInfo{Name: name, Size: fi.Size()})
		return nil
	})
	if err != nil {
		return nil, classify("list", prefix, err)
	}
	slices.SortFunc(out, func(a, b barrier.BlobInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

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

// copyInto copies r into f. A local file (an *os.File, or an
// io.LimitedReader of one) is copied by copyFile, without its bytes passing
// through user space: read into a buffer and written out again, they would
// pass through it twice. A
// reader that writes itself out (bytes in memory, a checkpoint's metadata in
// pieces) is copied whole after one check of ctx: hidden behind a wrapper it
// would be copied 32 KiB at a time through an extra buffer, a thousand write
// calls for a checkpoint's metadata of 38 MB. Any other reader is read in
// chunks, ctx checked before each.
func copyInto(ctx context.Context, f *os.File, r io.Reader) error {
	if src, n, ok := fileSource(r); ok {
		return copyFile(ctx, f, src, n)
	}
	if _, whole := r.(io.WriterTo); whole {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := io.Copy(f, r)
		return err
	}
	_, err := io.Copy(f, ctxReader{ctx, r})
	return err
}

// fileCopyChunk is how much of a local file copyFile hands the kernel
// between checks of ctx.
const fileCopyChunk = 8 << 20

// fileSource returns the file r reads and how many bytes of it r yields at
// most, when r is an *os.File or an io.LimitedReader of one.
func fileSource(r io.Reader) (*os.File, int64, bool) {
	switch v := r.(type) {
	case *os.File:
		return v, math.MaxInt64, true
	case *io.LimitedReader:
		if src, ok := v.R.(*os.File); ok {
			return src, v.N, true
		}
	}
	return nil, 0, false
}

// copyFile copies up to n bytes of src, from its offset, into dst, in
// chunks of fileCopyChunk with ctx checked before each: by direct writes of
// the source's mapped pages where copyDirect can, else by the kernel
// (io.CopyN between two files reaches os.File.ReadFrom with an
// io.LimitedReader of src, which it hands to copy_file_range).
func copyFile(ctx context.Context, dst, src *os.File, n int64) error {
	if done, err := copyDirect(ctx, dst, src, n); done {
		return err
	}
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := io.CopyN(dst, src, min(n, fileCopyChunk))
		n -= c
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ctxReader stops a copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
