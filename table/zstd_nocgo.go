//go:build !cgo

package table

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdDecodeInto decompresses src, one or more zstd frames, into dst, which
// must be exactly the size they decompress to: it fails on any other size,
// writing nothing beyond dst.
func zstdDecodeInto(dst, src []byte) error { return zstdDecodeIntoGo(dst, src) }

// zstdFrameEncoder appends frames of the Go encoder at its fastest level,
// literals stored raw: single segment, with the content size and no
// checksum (libzstd's frames of few values decode faster: zstd_cgo.go).
type zstdFrameEncoder struct{ e *zstd.Encoder }

var zstdFrameEncoders sync.Pool // *zstdFrameEncoder

func newZstdFrameEncoder() (*zstdFrameEncoder, error) {
	if e, ok := zstdFrameEncoders.Get().(*zstdFrameEncoder); ok {
		return e, nil
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithNoEntropyCompression(true))
	return &zstdFrameEncoder{e: e}, err
}

// appendFrame appends src, not empty, to dst as one frame.
func (e *zstdFrameEncoder) appendFrame(dst, src []byte) ([]byte, error) {
	return e.e.EncodeAll(src, dst), nil
}

// release returns the encoder to the pool.
func (e *zstdFrameEncoder) release() { zstdFrameEncoders.Put(e) }
