package table

import (
	"slices"

	"github.com/parquet-go/parquet-go"
	parquetzstd "github.com/parquet-go/parquet-go/compress/zstd"
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
// A page is cut into round(size/frameBytes) frames, so a page of up to
// 1.5 frames stays one frame, which parquet-go's ZSTD codec
// writes as it writes pages of unframed files (Huffman-coded literals): a
// file of small pages, as a checkpoint of a few hundred rows writes, is
// the same either way. Byte-array pages are cut too: a probe hit then
// decompresses one 4 KiB frame of its string instead of its 20 KiB page
// (BenchmarkProbe 1M, 1,000 keys: -17% CPU per key; file bytes +1.2%).
// Literals of framed pages are stored without Huffman coding: a table per
// 4 KiB frame costs more CPU, writing and reading, than it saves bytes
// (1M rows, 4 KiB frames: encoding -30% CPU, 1,000-key probe about -13%
// CPU per key, file +14% bytes against framed pages with Huffman-coded
// literals). Where cgo is available libzstd writes the frames
// (zstdFrameEncoder), whose fastest levels code the sequences of a frame
// of fewer than about 70 values (a 512-byte frame of BIGINT or DOUBLE)
// with zstd's predefined tables, where the Go encoder sends tables of the
// frame's own: the decoder of such a frame builds no tables, which were
// 13% of the CPU of a 10M-row probe.
type framedZstdCodec struct {
	frameBytes int
	wholeBelow int                // a page of fewer bytes stays one frame
	whole      *parquetzstd.Codec // a page of one frame
	// keep: the page of a _KEY_ column, kept for its twin; twin: the page
	// of the key field's own column (see twinPage). Nil in a codec that
	// may serve more than one writer at a time.
	keep, twin *twinPage
}

func newFramedZstdCodec(frameBytes int) *framedZstdCodec {
	return newFramedZstdCodecAbove(frameBytes, frameBytes)
}

// newFramedZstdCodecAbove cuts pages into frames of frameBytes, but keeps
// pages of less than 1.5 pageFrameBytes one frame.
func newFramedZstdCodecAbove(frameBytes, pageFrameBytes int) *framedZstdCodec {
	return &framedZstdCodec{frameBytes: frameBytes, wholeBelow: pageFrameBytes + pageFrameBytes/2, whole: unframedZstdCodec()}
}

// unframedZstdCodec is the codec of zstd pages of one frame.
func unframedZstdCodec() *parquetzstd.Codec {
	return &parquetzstd.Codec{Level: parquetzstd.SpeedFastest, Concurrency: 1}
}

func (c *framedZstdCodec) String() string { return "ZSTD" }

func (c *framedZstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *framedZstdCodec) Encode(dst, src []byte) ([]byte, error) {
	if out, ok := c.twin.reuse(dst, src); ok {
		return out, nil
	}
	out, err := c.encode(dst, src)
	if err == nil {
		c.keep.set(src, out)
	}
	return out, err
}

func (c *framedZstdCodec) encode(dst, src []byte) ([]byte, error) {
	frames := max(1, (len(src)+c.frameBytes/2)/c.frameBytes)
	if frames == 1 || len(src) < c.wholeBelow {
		return c.whole.Encode(dst, src)
	}
	e, err := newZstdFrameEncoder()
	if err != nil {
		return dst, err
	}
	defer e.release()
	dst = dst[:0]
	// Frames are counted from the end of the page, where its values end:
	// the first frame takes the levels and the remainder, every other one
	// frameBytes, so frames of fixed-width values start on a value.
	n := len(src) - (frames-1)*c.frameBytes
	for len(src) > 0 {
		if dst, err = e.appendFrame(dst, src[:n]); err != nil {
			return dst, err
		}
		src = src[n:]
		n = min(len(src), c.frameBytes)
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

// framedZstdSchema is the layout's parquet schema with every column
// compressed by a framed codec of its own, for one writer at a time (the
// codecs of a _KEY_ column and its field's column share a twinPage):
// frames of frameRows values of a
// fixed-width value column, so that a row's frames of each value column
// cover the same rows, frames of twice that of the key and system columns
// and of the value copies of primary key fields, and frames of frameBytes
// of a byte-array column (frameRows <= 0: frameBytes for every column). A
// probe hit decompresses a frame of each value column it returns; the key
// columns it reads through the key-page cache, by page, the system columns
// not at all, and key fields it takes from the probe keys, so smaller
// frames there would only cost bytes. Pages of less than 1.5 frameBytes stay one frame either
// way, so the small pages of a small checkpoint are what they were.
func framedZstdSchema(l *dataFileLayout, frameBytes, frameRows int) *parquet.Schema {
	fields := make([]orderedField, len(l.fields))
	codecs := make([]*framedZstdCodec, len(l.fields))
	for i, f := range l.fields {
		fb := frameBytes
		if w := fixedPhysicalWidth(f.Node.Type()); w > 0 && frameRows > 0 {
			fb = frameRows * w
			if i < l.fieldCol(0) || slices.Contains(l.schema.PrimaryKeys, f.name) {
				fb *= 2
			}
		}
		codecs[i] = newFramedZstdCodecAbove(fb, frameBytes)
		fields[i] = orderedField{Node: parquet.Compressed(f.Node, codecs[i]), name: f.name}
	}
	for k, fi := range l.keyIdx {
		key, field := codecs[k], codecs[l.fieldCol(fi)]
		if key.frameBytes == field.frameBytes && key.wholeBelow == field.wholeBelow {
			key.keep = &twinPage{}
			field.twin = key.keep
		}
	}
	return parquet.NewSchema(parquetMessageName, orderedGroup(fields))
}

// fixedPhysicalWidth is the PLAIN width in bytes of a value of a parquet
// type, 0 for byte arrays and booleans.
func fixedPhysicalWidth(t parquet.Type) int {
	if t.Kind() == parquet.FixedLenByteArray {
		return plainWidth(t.Kind(), t.Length())
	}
	return plainWidth(t.Kind(), 0)
}
