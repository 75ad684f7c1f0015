//go:build !cgo

package table

// zstdDecodeInto decompresses src, one or more zstd frames, into dst, which
// must be exactly the size they decompress to: it fails on any other size,
// writing nothing beyond dst.
func zstdDecodeInto(dst, src []byte) error { return zstdDecodeIntoGo(dst, src) }
