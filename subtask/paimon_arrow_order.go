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
// where its datums start and its place in the record. It holds no pointer,
// so the sort's moves cost no write barrier while the collector runs.
type placedRow struct {
	line uint64
	at   int32
}

// rowDatums are the first datums of a row's entry key and of its value
// (nil: none, or a tombstone's value), by the row's place in the record.
type rowDatums struct {
	sub, value *Datum
}

// datumLine is the cache line of a datum: the heap does not move objects,
// and an address that did would only cost order, not correctness.
func datumLine(d *Datum) uint64 { return uint64(uintptr(unsafe.Pointer(d))) >> 6 }

// lineBytes is how many low bytes of a line number sortPlaced orders by: a
// line number of a 64-bit address has 58 bits.
const lineBytes = 8

// sortPlaced sorts rows by line, stably, a byte at a time from the lowest;
// a byte every row shares (the high bytes of addresses in one heap) takes no
// pass. It returns the sorted rows and the other buffer, both of rows'
// length, in rows and tmp (grown to it).
func sortPlaced(rows, tmp []placedRow) (sorted, spare []placedRow) {
	if cap(tmp) < len(rows) {
		tmp = make([]placedRow, len(rows), cap(rows))
	}
	tmp = tmp[:len(rows)]
	if len(rows) < 2 {
		return rows, tmp
	}
	var counts [lineBytes][256]int32
	for i := range rows {
		line := rows[i].line
		for b := range lineBytes {
			counts[b][byte(line>>(8*b))]++
		}
	}
	for b := range lineBytes {
		c := &counts[b]
		if int(c[byte(rows[0].line>>(8*b))]) == len(rows) {
			continue
		}
		var sum int32
		for d := range c {
			c[d], sum = sum, sum+c[d]
		}
		for i := range rows {
			d := byte(rows[i].line >> (8 * b))
			tmp[c[d]] = rows[i]
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
	return c.placed, c.datums
}

// sortPlaced sorts placed rows (in the buffer startPlaced returned) by
// line; the sort's two buffers trade places with each of its passes.
func (c *paimonCodec) sortPlaced(placed []placedRow) []placedRow {
	sorted, spare := sortPlaced(placed, c.placedTmp)
	c.placed, c.placedTmp = sorted[:0], spare[:0]
	return sorted
}

// endPlaced lets go of the rows' datums, keeping the buffers.
func (c *paimonCodec) endPlaced() { clear(c.datums[:min(c.placedLen, len(c.datums))]) }
