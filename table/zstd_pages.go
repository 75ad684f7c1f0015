package table

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Every zstd page body the page reader decompresses goes through
// zstdDecodeInto. Where cgo is available it runs libzstd (zstd_cgo.go),
// which took about 10% off a 1,000-key probe of pages of one frame
// (BenchmarkProbe 1M); on pages of fixed-width values both decoders spend
// about the same per byte, as each 8-byte value is a sequence of its own.
// Without cgo it runs the pure Go decoder.
// Both write into a buffer the caller sizes from the page header and accept
// only input that decompresses to exactly that many bytes, so a corrupt page
// costs at most the buffer its header claims (bounded by maxPageBytes and
// the chunk's uncompressed size).

// zstdGoDecoder decompresses zstd in Go; DecodeAll is safe for concurrent use
// and keeps its block decoders pooled.
var zstdGoDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
})

// zstdDecodeIntoGo is zstdDecodeInto in Go.
func zstdDecodeIntoGo(dst, src []byte) error {
	dec, err := zstdGoDecoder()
	if err != nil {
		return err
	}
	out, err := dec.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return err
	}
	if len(out) != len(dst) { // the cap limit keeps out in dst
		return fmt.Errorf("%d bytes decompressed for %d", len(out), len(dst))
	}
	return nil
}
