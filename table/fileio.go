package table

import (
	"io"
	"os"
)

// FileIO is everything the table does to its local directory. Paths are
// slash-separated and absolute or relative to the process; the table only
// joins them. The interface is small on purpose: a simulated implementation
// (crashes that drop unsynced data, failing fsync, ENOSPC) must fit behind it.
type FileIO interface {
	// Open opens a file for random-access reads.
	Open(path string) (ReadableFile, error)
	// ReadFile reads a whole file.
	ReadFile(path string) ([]byte, error)
	// Create creates (or truncates) a file for writing. A missing parent
	// directory is created on the first miss only; ensured directories are
	// remembered so the common path costs no mkdir.
	Create(path string) (WritableFile, error)
	// PublishExclusive makes tmp visible as target only if target does not
	// exist (link(2) or RENAME_NOREPLACE); it returns an error satisfying
	// errors.Is(err, fs.ErrExist) when target exists. tmp is removed.
	PublishExclusive(tmp, target string) error
	// Rename replaces dst with src.
	Rename(src, dst string) error
	// Link hard-links src to dst, creating dst's parent on the first miss.
	Link(src, dst string) error
	// Remove deletes a file; a missing file is not an error.
	Remove(path string) error
	// RemoveAll deletes a directory tree; a missing tree is not an error.
	RemoveAll(path string) error
	// List returns the names (not paths) of the entries of dir, sorted; a
	// missing dir yields no entries and no error.
	List(dir string) ([]string, error)
	// Stat returns the size of a file, or an error satisfying
	// errors.Is(err, fs.ErrNotExist).
	Stat(path string) (int64, error)
	// SyncDir makes the names in dir durable.
	SyncDir(dir string) error
}

// ReadableFile is an open file for random-access reads.
type ReadableFile interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// WritableFile is a file being written. Sync makes its content durable;
// Close does not sync.
type WritableFile interface {
	io.Writer
	Sync() error
	Close() error
}

// SequentialOpener is implemented by a FileIO of the local filesystem that
// can also open a file for one read from start to end as an *os.File. io.Copy
// of such a file into another *os.File runs in the kernel (copy_file_range)
// instead of through a user-space buffer, which is what uploads of checkpoint
// files want; a FileIO without it (a simulated one) is read through Open.
type SequentialOpener interface {
	OpenSequential(path string) (*os.File, error)
}
