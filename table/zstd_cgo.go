//go:build cgo

package table

import (
	"fmt"
	"sync"

	"github.com/DataDog/zstd"
)

// zstdContexts pools libzstd contexts; one serves one call at a time, and
// keeps the tables and buffers of its last frame for the next.
var zstdContexts = sync.Pool{New: func() any { return zstd.NewCtx() }}

// zstdDecodeInto decompresses src, one or more zstd frames, into dst, which
// must be exactly the size they decompress to: it fails on any other size,
// writing nothing beyond dst.
func zstdDecodeInto(dst, src []byte) error {
	if len(dst) == 0 || len(src) == 0 {
		// libzstd's binding needs a first byte of both
		return zstdDecodeIntoGo(dst, src)
	}
	c := zstdContexts.Get().(zstd.Ctx)
	n, err := c.DecompressInto(dst, src)
	zstdContexts.Put(c)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("%d bytes decompressed for %d", n, len(dst))
	}
	return nil
}
