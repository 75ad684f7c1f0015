package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A zstd page body is one or more zstd frames (RFC 8878), each of which
// decompresses alone. Where every frame records its content size, the frame
// and block headers tell where each frame starts in the compressed body and
// in the page's values without decompressing anything, so a sparse read
// decompresses only the frames that hold its rows' bytes.

const (
	zstdMagic       = 0xFD2FB528
	zstdMaxBlock    = 128 << 10 // RFC 8878: Block_Maximum_Size
	zstdFrameHeader = 2         // magic follows; descriptor and window bytes at least
)

// zstdFrames is where the frames of a page body lie: frame i is compressed
// bytes [comp[i], comp[i+1]) of the body and decompresses to bytes
// [plain[i], plain[i+1]) of the page's values.
type zstdFrames struct {
	comp  []uint32
	plain []uint32
}

var errZstdFrames = errors.New("zstd frames")

// parseZstdFrames walks the frame and block headers of body, which must
// decompress to exactly plainSize bytes. It fails on a frame without a
// content size (but the last, which holds the rest), a skippable or
// dictionary frame, or headers that do not add up.
func parseZstdFrames(body []byte, plainSize int) (zstdFrames, error) {
	var fr zstdFrames
	at, plain := 0, 0
	for at < len(body) {
		start := at
		if len(body)-at < 4+zstdFrameHeader || binary.LittleEndian.Uint32(body[at:]) != zstdMagic {
			return fr, fmt.Errorf("%w: no frame magic at %d", errZstdFrames, at)
		}
		at += 4
		desc := body[at]
		at++
		fcsFlag, single, checksum, dictFlag := desc>>6, desc>>5&1 == 1, desc>>2&1 == 1, desc&3
		if desc&8 != 0 || dictFlag != 0 {
			return fr, fmt.Errorf("%w: frame at %d: reserved bit or dictionary", errZstdFrames, start)
		}
		if !single {
			at++ // window descriptor
		}
		size := [4]int{0, 2, 4, 8}[fcsFlag]
		if fcsFlag == 0 && single {
			size = 1
		}
		if len(body)-at < size {
			return fr, fmt.Errorf("%w: frame at %d: header overruns the page", errZstdFrames, start)
		}
		content := uint64(math.MaxUint64) // unknown
		switch size {
		case 1:
			content = uint64(body[at])
		case 2:
			content = uint64(binary.LittleEndian.Uint16(body[at:])) + 256
		case 4:
			content = uint64(binary.LittleEndian.Uint32(body[at:]))
		case 8:
			content = binary.LittleEndian.Uint64(body[at:])
		}
		at += size
		for last := false; !last; {
			if len(body)-at < 3 {
				return fr, fmt.Errorf("%w: frame at %d: block header overruns the page", errZstdFrames, start)
			}
			bh := uint32(body[at]) | uint32(body[at+1])<<8 | uint32(body[at+2])<<16
			at += 3
			last = bh&1 == 1
			n := int(bh >> 3)
			switch bh >> 1 & 3 {
			case 1: // RLE: one byte repeated n times
				n = 1
			case 3:
				return fr, fmt.Errorf("%w: frame at %d: reserved block type", errZstdFrames, start)
			}
			if n > zstdMaxBlock || len(body)-at < n {
				return fr, fmt.Errorf("%w: frame at %d: block of %d bytes overruns the page", errZstdFrames, start, n)
			}
			at += n
		}
		if checksum {
			if len(body)-at < 4 {
				return fr, fmt.Errorf("%w: frame at %d: checksum overruns the page", errZstdFrames, start)
			}
			at += 4
		}
		if content == math.MaxUint64 {
			if at < len(body) {
				return fr, fmt.Errorf("%w: frame at %d has no content size", errZstdFrames, start)
			}
			content = uint64(plainSize - plain)
		}
		if content > uint64(plainSize-plain) {
			return fr, fmt.Errorf("%w: frame at %d: %d bytes beyond the page's %d", errZstdFrames, start, content, plainSize)
		}
		fr.comp = append(fr.comp, uint32(start))
		fr.plain = append(fr.plain, uint32(plain))
		plain += int(content)
	}
	if plain != plainSize || len(fr.comp) == 0 {
		return fr, fmt.Errorf("%w: frames hold %d bytes of the page's %d", errZstdFrames, plain, plainSize)
	}
	fr.comp = append(fr.comp, uint32(len(body)))
	fr.plain = append(fr.plain, uint32(plain))
	return fr, nil
}

// span returns the frames [a, b) that hold plain bytes [from, to), to > from.
func (fr *zstdFrames) span(from, to int64) (a, b int) {
	n := len(fr.plain) - 1
	for a < n-1 && int64(fr.plain[a+1]) <= from {
		a++
	}
	for b = a + 1; b < n && int64(fr.plain[b]) < to; b++ {
	}
	return a, b
}

// zstdBody returns the frames of a zstd page body and its decompressed bytes
// (aliasing sc); ok is false when the frames do not say where they lie or
// the body does not decompress to plainSize bytes.
func zstdBody(body []byte, plainSize int, sc *pageScratch) (_ zstdFrames, plain []byte, ok bool) {
	fr, err := parseZstdFrames(body, plainSize)
	if err != nil {
		return fr, nil, false
	}
	sc.plain, sc.plainOf = grow(sc.plain, plainSize), nil
	if zstdDecodeInto(sc.plain, body) != nil {
		return fr, nil, false
	}
	return fr, sc.plain, true
}

// zstdLevels is zstdBody for a page of fixed-width values, whose layout
// needs only the definition levels at the start of the body (none when
// levels is false): it decompresses the frames that hold them, not the
// page, and returns them (aliasing sc) as plain. A frame that does not
// decompress to the size its header records fails the read of its rows.
func zstdLevels(body []byte, plainSize int, levels bool, sc *pageScratch) (_ zstdFrames, plain []byte, ok bool) {
	fr, err := parseZstdFrames(body, plainSize)
	if err != nil {
		return fr, nil, false
	}
	if !levels {
		return fr, nil, true
	}
	need := int64(4) // the levels' length, then the levels
	for b := 1; ; {
		sc.plain, sc.plainOf = grow(sc.plain, int(fr.plain[b])), nil
		if zstdDecodeInto(sc.plain, body[:fr.comp[b]]) != nil {
			return fr, nil, false
		}
		if len(sc.plain) >= 4 {
			need = 4 + int64(binary.LittleEndian.Uint32(sc.plain))
		}
		if need <= int64(len(sc.plain)) || b == len(fr.plain)-1 || need > int64(plainSize) {
			return fr, sc.plain, true
		}
		_, b = fr.span(0, need)
	}
}

// layoutBytes returns bytes [from, to) of the values of page s by its
// layout: of an uncompressed page, read from the file; of a zstd page,
// decompressed from the frames that hold them, or taken from what learning
// the layout decompressed (pageScratch.plainOf). They alias sc.
func (d *DataFile) layoutBytes(lay *pageLayout, s pageSpan, from, to int64, sc *pageScratch) ([]byte, error) {
	fr := lay.frames
	if fr == nil {
		return sc.bytes(d.f, s.off+from, to-from)
	}
	if from < 0 || to <= from || to > int64(fr.plain[len(fr.plain)-1]) {
		return nil, fmt.Errorf("values [%d,%d) outside the page's %d bytes", from, to, fr.plain[len(fr.plain)-1])
	}
	if sc.plainOf == lay && to <= int64(len(sc.plain)) {
		return sc.plain[from:to], nil
	}
	a, b := fr.span(from, to)
	src, err := sc.bytes(d.f, s.off+int64(fr.comp[a]), int64(fr.comp[b]-fr.comp[a]))
	if err != nil {
		return nil, err
	}
	sc.plain, sc.plainOf = grow(sc.plain, int(fr.plain[b]-fr.plain[a])), nil
	if err := zstdDecodeInto(sc.plain, src); err != nil {
		return nil, fmt.Errorf("zstd frames %d-%d: %w", a, b, err)
	}
	return sc.plain[from-int64(fr.plain[a]) : to-int64(fr.plain[a])], nil
}
