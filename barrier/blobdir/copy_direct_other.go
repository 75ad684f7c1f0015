//go:build !linux

package blobdir

import (
	"context"
	"os"
)

// copyDirect declines: direct I/O from a mapping is only done on Linux, and
// copyFile copies another way.
func copyDirect(context.Context, *os.File, *os.File, int64) (bool, error) { return false, nil }
