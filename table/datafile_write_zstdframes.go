package table

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// framedZstdCodec is parquet's ZSTD codec writing each page as independent
// frames of frameBytes uncompressed bytes (DataFileOptions.ZstdFrameBytes).
// A zstd stream is a sequence of frames (RFC 8878) and the readers of
// parquet ZSTD pages (Java Paimon, pypaimon, parquet-go) decompress them in
// turn; every frame is single-segment, so its header records its content
// size, and a sparse read finds the frames that hold its rows from the
// frame headers and decompresses only those.
//
// A page of more than maxFramedPage uncompressed bytes stays one frame: at
// 1024 rows those are byte-array pages, which compress much better whole,
// and whose frames cost a dense read (most pages of a 10,000-key probe of a
// 1M-row table) about a third more CPU per key, each frame bringing its own
// entropy tables; fixed-width pages of 8 bytes a value split in two.
// Literals of framed pages are stored without Huffman coding: a table per
// 4 KiB frame costs more CPU, writing and reading, than it saves bytes
// (1M rows, 4 KiB frames: encoding -30% CPU, 1,000-key probe about -13%
// CPU per key, file +14% bytes against framed pages with Huffman-coded
// literals).
type framedZstdCodec struct {
	frameBytes int
	encoders   sync.Pool // *zstd.Encoder
}

// maxFramedPage bounds the pages written as several frames.
const maxFramedPage = 12 << 10

func (c *framedZstdCodec) String() string { return "ZSTD" }

func (c *framedZstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *framedZstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithNoEntropyCompression(true))
		if err != nil {
			return dst, err
		}
	}
	defer c.encoders.Put(e)
	dst = dst[:0]
	if len(src) == 0 {
		return e.EncodeAll(src, dst), nil
	}
	step := c.frameBytes
	if len(src) > maxFramedPage {
		step = len(src)
	}
	for len(src) > 0 {
		n := min(len(src), step)
		dst = e.EncodeAll(src[:n], dst)
		src = src[n:]
	}
	return dst, nil
}

func (c *framedZstdCodec) Decode(dst, src []byte) ([]byte, error) {
	d, err := zstdGoDecoder()
	if err != nil {
		return dst, err
	}
	return d.DecodeAll(src, dst[:0])
}
