package blobdir

import (
	"context"
	"errors"
	"syscall"

	"github.com/lakestate/lakestate/barrier"
)

// classify wraps a local filesystem error as a barrier.BlobError, deciding
// whether a retry can help. A full disk or quota is transient because
// garbage collection of subsumed checkpoints frees space; interrupted or
// busy calls are transient; an expired deadline is transient (the caller's
// timeout, not a property of the blob). Everything else, including EIO
// (after a failed fsync the page cache cannot be trusted), is permanent.
func classify(op, name string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return barrier.TransientError(op, name, err)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOSPC, syscall.EDQUOT, syscall.EINTR, syscall.EAGAIN, syscall.EBUSY,
			syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM:
			return barrier.TransientError(op, name, err)
		}
	}
	return barrier.PermanentError(op, name, err)
}
