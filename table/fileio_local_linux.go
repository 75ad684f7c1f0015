package table

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// linkUnsupported reports whether link(2) failed because the filesystem has
// no hard links, so an exclusive rename is the way to publish.
func linkUnsupported(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

// renameNoReplace renames src to dst and fails with EEXIST when dst exists.
func renameNoReplace(src, dst string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "renameat2", Old: src, New: dst, Err: err}
	}
	return nil
}
