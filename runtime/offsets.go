package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A source subtask's extras: the offsets of its splits.
//
//	uvarint count, then count × (uvarint split, uvarint offset), splits ascending

func encodeOffsets(offsets map[int]int64) []byte {
	splits := make([]int, 0, len(offsets))
	for s := range offsets {
		splits = append(splits, s)
	}
	slices.Sort(splits)
	out := binary.AppendUvarint(nil, uint64(len(splits)))
	for _, s := range splits {
		out = binary.AppendUvarint(out, uint64(s))
		out = binary.AppendUvarint(out, uint64(offsets[s]))
	}
	return out
}

func decodeOffsets(b []byte) (map[int]int64, error) {
	r := byteReader{buf: b}
	n := r.uvarint("split count")
	if r.err == nil && n > uint64(len(b)) {
		r.fail("split count %d exceeds the %d bytes", n, len(b))
	}
	out := make(map[int]int64)
	last := -1
	for i := uint64(0); i < n && r.err == nil; i++ {
		s, off := r.uvarint("split"), r.uvarint("offset")
		if r.err != nil {
			break
		}
		if s > 1<<31 || int(s) <= last {
			r.fail("split %d out of order after %d", s, last)
			break
		}
		if off > 1<<62 {
			r.fail("split %d: offset %d out of range", s, off)
			break
		}
		last = int(s)
		out[int(s)] = int64(off)
	}
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("source offsets: %w", err)
	}
	return out, nil
}

// mergeOffsets joins the offsets of every old source subtask; together they
// must cover every split exactly once.
func mergeOffsets(extras [][]byte, splits int) (map[int]int64, error) {
	all := make(map[int]int64, splits)
	for i, b := range extras {
		offs, err := decodeOffsets(b)
		if err != nil {
			return nil, fmt.Errorf("subtask %d: %w", i, err)
		}
		for s, off := range offs {
			if _, dup := all[s]; dup {
				return nil, fmt.Errorf("split %d recorded by two subtasks", s)
			}
			if s >= splits {
				return nil, fmt.Errorf("split %d recorded, the source has %d", s, splits)
			}
			all[s] = off
		}
	}
	if len(all) != splits {
		return nil, fmt.Errorf("offsets of %d splits recorded, the source has %d", len(all), splits)
	}
	return all, nil
}

// byteReader decodes varint-framed bytes and keeps the first error.
type byteReader struct {
	buf []byte
	off int
	err error
}

func (r *byteReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *byteReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.fail("%s: bad or truncated varint", what)
		return 0
	}
	r.off += n
	return v
}

func (r *byteReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf[r.off:])
	if n <= 0 {
		r.fail("%s: bad or truncated varint", what)
		return 0
	}
	r.off += n
	return v
}

func (r *byteReader) bytes(what string) []byte {
	n := r.uvarint(what + " length")
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)-r.off) {
		r.fail("%s: length %d exceeds the %d bytes left", what, n, len(r.buf)-r.off)
		return nil
	}
	b := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *byteReader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.buf) {
		r.fail("%s: truncated", what)
		return 0
	}
	b := r.buf[r.off]
	r.off++
	return b
}

func (r *byteReader) finish() error {
	if r.err == nil && r.off != len(r.buf) {
		r.fail("%d trailing bytes", len(r.buf)-r.off)
	}
	return r.err
}
