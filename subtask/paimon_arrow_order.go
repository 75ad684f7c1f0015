package subtask

import (
	"slices"
	"unsafe"
)

// A map flush's rows come in key order, but their datums sit where the
// operator's writes left them: in the chunks of its row arenas, in the
// order the rows arrived. Visiting them in key order jumps across memory,
// a cache miss and often a TLB miss per row; visiting them in memory order
// walks each chunk forward, which the hardware prefetches. So the build of
// a map record sorts its rows by the address of their datums, a short
// radix sort over compact entries, and sets each row's values at its place
// in the columns (placed strings are laid out in row order afterwards).

// placedRow is a row of a flush in its sort by memory order: the cache line
// where its datums start, as an offset from a base line in the high 32 bits,
// and its place in the record in the low 32. It is one word, with no
// pointer, so the sort moves little and costs no write barrier while the
// collector runs.
type placedRow uint64

// at is the row's place in the record.
func (p placedRow) at() int { return int(uint32(p)) }

// rowDatums are the first datums of a row's entry key and of its value
// (nil: none, or a tombstone's value), by the row's place in the record.
type rowDatums struct {
	sub, value *Datum
}

// datumLine is the cache line of a datum: the heap does not move objects,
// and an address that did would only cost order, not correctness.
func datumLine(d *Datum) uint64 { return uint64(uintptr(unsafe.Pointer(d))) >> 6 }

// sortPlaced sorts rows by line, stably, a byte at a time from the lowest
// byte of the line; a byte every row shares takes no pass. It returns the
// sorted rows and the other buffer, both of rows' length, in rows and tmp
// (grown to it).
func sortPlaced(rows, tmp []placedRow) (sorted, spare []placedRow) {
	if cap(tmp) < len(rows) {
		tmp = make([]placedRow, len(rows), cap(rows))
	}
	tmp = tmp[:len(rows)]
	if len(rows) < 2 {
		return rows, tmp
	}
	var counts [4][256]int32
	for _, p := range rows {
		for b := range 4 {
			counts[b][byte(p>>(32+8*b))]++
		}
	}
	for b := range 4 {
		c := &counts[b]
		shift := 32 + 8*b
		if int(c[byte(rows[0]>>shift)]) == len(rows) {
			continue
		}
		var sum int32
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		for _, p := range rows {
			d := byte(p >> shift)
			tmp[c[d]] = p
			c[d]++
		}
		rows, tmp = tmp, rows
	}
	return rows, tmp
}

// startPlaced returns the codec's buffer of placed rows, empty, with room
// for n, and its datums of n rows.
func (c *paimonCodec) startPlaced(n int) ([]placedRow, []rowDatums) {
	c.placed, c.placedLen = slices.Grow(c.placed[:0], n), n
	c.datums = slices.Grow(c.datums[:0], n)[:n]
	c.unordered = false
	return c.placed, c.datums
}

// place appends row at, whose datums start at d, to placed. Lines are
// offsets from a base half the range below the first row's, and a row out
// of that range leaves the rows in key order.
func (c *paimonCodec) place(placed []placedRow, d *Datum, at int) []placedRow {
	line := datumLine(d)
	if len(placed) == 0 {
		c.baseLine = line - 1<<31
	}
	off := line - c.baseLine
	if off>>32 != 0 {
		c.unordered, off = true, 0
	}
	return append(placed, placedRow(off<<32|uint64(uint32(at))))
}

// sortPlaced sorts placed rows (in the buffer startPlaced returned) by
// line, unless one fell out of range: then by place. The sort's two buffers
// trade places with each of its passes.
func (c *paimonCodec) sortPlaced(placed []placedRow) []placedRow {
	if c.unordered {
		for k := range placed {
			placed[k] = placedRow(placed[k].at())
		}
	}
	sorted, spare := sortPlaced(placed, c.placedTmp)
	c.placed, c.placedTmp = sorted[:0], spare[:0]
	return sorted
}

// endPlaced lets go of the rows' datums, keeping the buffers.
func (c *paimonCodec) endPlaced() { clear(c.datums[:min(c.placedLen, len(c.datums))]) }
