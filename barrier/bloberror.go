package barrier

import (
	"context"
	"errors"
	"io/fs"
)

// BlobError is the error every BlobStore operation returns. Transient says
// whether retrying the same operation may succeed (a timeout, a throttled
// request, a full disk that garbage collection may free); anything else (a
// missing blob, an invalid name, a permission problem, corruption) fails the
// same way again.
type BlobError struct {
	Op        string // "put", "get", "stat", "delete" or "list"
	Name      string // the blob name or list prefix
	Transient bool
	Err       error
}

func (e *BlobError) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return "blob " + e.Op + " " + e.Name + ": " + kind + ": " + e.Err.Error()
}

func (e *BlobError) Unwrap() error { return e.Err }

// TransientError wraps err as a retryable failure of op on name.
func TransientError(op, name string, err error) error {
	return &BlobError{Op: op, Name: name, Transient: true, Err: err}
}

// PermanentError wraps err as a failure of op on name that a retry would repeat.
func PermanentError(op, name string, err error) error {
	return &BlobError{Op: op, Name: name, Err: err}
}

// NotFoundError is the permanent error for a missing blob.
func NotFoundError(op, name string) error {
	return PermanentError(op, name, fs.ErrNotExist)
}

// IsTransient reports whether err is worth retrying: a BlobError marked
// transient, or a deadline that expired (an ambiguous timeout). A cancelled
// context is not transient: the caller gave up.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if be, ok := errors.AsType[*BlobError](err); ok {
		return be.Transient
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// IsNotFound reports whether err says the blob does not exist.
func IsNotFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }
