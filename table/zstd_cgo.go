//go:build cgo

package table

import (
	"fmt"
	"slices"
	"sync"

	"github.com/DataDog/zstd"
)

// zstdContexts pools libzstd contexts; one serves one call at a time, and
// keeps the tables and buffers of its last frame for the next.
var zstdContexts = sync.Pool{New: func() any { return zstd.NewCtx() }}

// zstdFrameLevel is libzstd's level of a frame of a framed page: a negative
// level stores literals raw, and a frame of fewer than 72 sequences codes
// their literal and match lengths (of fewer than 36, their offsets too)
// with zstd's predefined tables, which a decoder does not build: see
// framedZstdCodec.
const zstdFrameLevel = -1

// zstdFrameEncoder appends frames of libzstd at zstdFrameLevel: single
// segment, with the content size and no checksum.
type zstdFrameEncoder struct{ c zstd.Ctx }

func newZstdFrameEncoder() (*zstdFrameEncoder, error) {
	return &zstdFrameEncoder{c: zstdContexts.Get().(zstd.Ctx)}, nil
}

// appendFrame appends src, not empty, to dst as one frame.
func (e *zstdFrameEncoder) appendFrame(dst, src []byte) ([]byte, error) {
	dst = slices.Grow(dst, zstd.CompressBound(len(src)))
	out, err := e.c.CompressLevel(dst[len(dst):cap(dst)], src, zstdFrameLevel)
	if err != nil {
		return dst, err
	}
	return dst[:len(dst)+len(out)], nil
}

// release returns the encoder's context to the pool.
func (e *zstdFrameEncoder) release() { zstdContexts.Put(e.c) }

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
