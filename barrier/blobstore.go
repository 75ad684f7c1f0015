package barrier

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// BlobStore is where checkpoints live: a flat namespace of immutable blobs
// addressed by slash-separated names (see ValidBlobName). The embedded default
// is a local directory (package blobdir); a simulated store injects failures,
// ambiguous timeouts and latency. Implementations are safe for concurrent use.
//
// Errors are *BlobError values; IsTransient tells the uploader which ones to
// retry and IsNotFound recognises a missing blob.
type BlobStore interface {
	// Put stores the content of r under name, replacing any blob of that
	// name. The put is atomic: readers see the whole new content or the old
	// state, never a prefix. A transient error is ambiguous: the blob may or
	// may not have landed, so retrying the same put must be harmless.
	Put(ctx context.Context, name string, r io.Reader) error
	// Get opens a blob for reading.
	Get(ctx context.Context, name string) (io.ReadCloser, error)
	// Stat describes a blob without reading it.
	Stat(ctx context.Context, name string) (BlobInfo, error)
	// Delete removes a blob; deleting a missing blob is not an error, so
	// garbage collection can be retried blindly.
	Delete(ctx context.Context, name string) error
	// List returns the blobs whose names start with prefix (a plain string
	// prefix, as in object stores), sorted by name.
	List(ctx context.Context, prefix string) ([]BlobInfo, error)
}

// BlobInfo describes a stored blob.
type BlobInfo struct {
	Name string
	Size int64
}

// ValidBlobName reports whether name can address a blob: a non-empty,
// unrooted, slash-separated path without empty, "." or ".." elements, whose
// elements do not start with ".tmp" (reserved for stores' temporary files).
func ValidBlobName(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fmt.Errorf("invalid blob name %q: want an unrooted slash path without empty, . or .. elements", name)
	}
	for i := 0; i < len(name); i++ {
		if (i == 0 || name[i-1] == '/') && hasTempPrefix(name[i:]) {
			return fmt.Errorf("invalid blob name %q: elements starting with %q are reserved", name, TempPrefix)
		}
		if name[i] == '\\' || name[i] == 0 {
			return fmt.Errorf("invalid blob name %q: contains %q", name, name[i])
		}
	}
	return nil
}

// TempPrefix starts the names of stores' temporary files; no blob name
// element may start with it.
const TempPrefix = ".tmp"

func hasTempPrefix(s string) bool { return strings.HasPrefix(s, TempPrefix) }
