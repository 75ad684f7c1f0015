package subtask

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// flushColumn accumulates one column of a flush record in the Arrow layout
// itself (validity bitmap, little-endian values, offsets and bytes), sized
// for the flush up front: value i is stored at its place, so setting a
// datum is a store, and no builder grows, copies or dispatches per value.
// The buffers go to the record; once it was written (recycle), the next
// flush fills them again.
type flushColumn struct {
	typ   arrow.DataType
	kind  columnKind
	width int // bytes of a fixed-width value (0: a bitmap or variable)
	n     int
	nulls int
	valid []byte  // nil for a key column, which holds no NULL
	vals  []byte  // fixed-width values, a boolean bitmap, or variable-length bytes
	offs  []int32 // variable-length columns
	end   int     // bytes of vals in use, variable-length columns
	// The bytes and rows of the column's last flush: a variable-length
	// column's room is sized from them, since counting the bytes first
	// would visit every row's datums twice.
	lastBytes, lastRows int
	// lent are the buffers of the last record, spare those handed back
	// (recycle) once that record was written: the next flush fills them
	// instead of allocating and zeroing a flush's worth of memory.
	lent, spare columnBuffers
	// placed: the values of a variable-length column are set in any order
	// (a build that visits rows in memory order): set keeps each value's
	// string in strs, of pending bytes in all, and pack lays them out in
	// row order once every value is set, in a buffer of exactly their size.
	placed  bool
	strs    []string
	pending int
}

// columnBuffers are the buffers of one column of a record.
type columnBuffers struct {
	valid, vals []byte
	offs        []int32
}

type columnKind uint8

const (
	columnBool columnKind = iota
	columnInt8
	columnInt16
	columnInt32 // also DATE
	columnInt64 // also TIMESTAMP
	columnFloat32
	columnFloat64
	columnBytes // STRING and BYTES
	columnDecimal
)

func newFlushColumn(t arrow.DataType) (flushColumn, error) {
	c := flushColumn{typ: t}
	switch t.ID() {
	case arrow.BOOL:
		c.kind = columnBool
	case arrow.INT8:
		c.kind, c.width = columnInt8, 1
	case arrow.INT16:
		c.kind, c.width = columnInt16, 2
	case arrow.INT32, arrow.DATE32:
		c.kind, c.width = columnInt32, 4
	case arrow.INT64, arrow.TIMESTAMP:
		c.kind, c.width = columnInt64, 8
	case arrow.FLOAT32:
		c.kind, c.width = columnFloat32, 4
	case arrow.FLOAT64:
		c.kind, c.width = columnFloat64, 8
	case arrow.STRING, arrow.BINARY:
		c.kind = columnBytes
	case arrow.DECIMAL128:
		c.kind, c.width = columnDecimal, 16
	default:
		return c, fmt.Errorf("arrow type %s has no flush column", t)
	}
	return c, nil
}

// start makes room for n values, with a validity bitmap unless key (a key
// column holds no NULL); a variable-length column's bytes are at least data,
// or as many per row as in its last flush, with an eighth more. With placed,
// a variable-length column's values may be set in any order, and pack lays
// them out.
func (c *flushColumn) start(n, data int, key, placed bool) {
	if c.lastRows > 0 {
		data = max(data, int(int64(c.lastBytes)*int64(n)/int64(c.lastRows)*9/8))
	}
	c.n, c.nulls, c.end = n, 0, 0
	spare := c.spare
	c.lent, c.spare = columnBuffers{}, columnBuffers{}
	c.valid = nil
	if !key {
		// Every value starts valid: a NULL clears its bit, so the bitmap
		// costs nothing per value of a column that holds few NULLs.
		c.valid = reused(spare.valid, bitmapBytes(n))
		for k := range c.valid {
			c.valid[k] = 0xFF
		}
	}
	if c.placed {
		clear(c.strs) // a build that failed before pack
	}
	c.placed = placed && c.kind == columnBytes
	switch c.kind {
	case columnBool:
		c.vals = zeroed(spare.vals, bitmapBytes(n))
	case columnBytes:
		// Every value sets its end offset and its bytes, in order: only
		// the first offset is not written.
		c.offs = reused(spare.offs, n+1)
		c.offs[0] = 0
		if c.placed {
			// pack sizes the bytes once it knows them.
			c.vals, c.pending = spare.vals[:0], 0
			if cap(c.strs) < n {
				c.strs = make([]string, n, n+n/4)
			}
			c.strs = c.strs[:n] // all empty: pack clears them
			return
		}
		c.vals = reused(spare.vals, data)
		c.vals = c.vals[:cap(c.vals)]
	default:
		// Every value is set, a NULL as zero bytes: the values need no
		// clearing first.
		c.vals = reused(spare.vals, n*c.width)
	}
}

// reused is buf resliced to n elements if it holds them and is not far
// larger (a spike of one flush is not kept for all later ones), else a new
// slice with room for a quarter more, as flushes grow with the state; its
// elements are not cleared.
func reused[T byte | int32](buf []T, n int) []T {
	if cap(buf) >= n && cap(buf) <= max(4*n, 64<<10) {
		return buf[:n]
	}
	return make([]T, n, n+n/4)
}

// zeroed is reused with its n elements zero.
func zeroed(buf []byte, n int) []byte {
	if cap(buf) >= n && cap(buf) <= max(4*n, 64<<10) {
		buf = buf[:n]
		clear(buf)
		return buf
	}
	return make([]byte, n, n+n/4)
}

// recycle hands back the buffers of the column's last record, which nothing
// reads any more: the next start fills them.
func (c *flushColumn) recycle() { c.spare, c.lent = c.lent, columnBuffers{} }

// bitmapBytes is the size of a bitmap of n bits, in whole 64-bit words.
func bitmapBytes(n int) int { return (n + 63) / 64 * 8 }

// set stores d as value i; every value of a column is set once, a
// fixed-width NULL as zero bytes. A variable-length column's values are set
// in order, unless placed.
func (c *flushColumn) set(i int, d *Datum) {
	if d.IsNull() {
		c.nulls++
		bitutil.ClearBit(c.valid, i)
		switch c.kind {
		case columnBool:
			// The bitmap starts clear.
		case columnInt8:
			c.vals[i] = 0
		case columnInt16:
			binary.LittleEndian.PutUint16(c.vals[2*i:], 0)
		case columnInt32, columnFloat32:
			binary.LittleEndian.PutUint32(c.vals[4*i:], 0)
		case columnInt64, columnFloat64:
			binary.LittleEndian.PutUint64(c.vals[8*i:], 0)
		case columnDecimal:
			binary.LittleEndian.PutUint64(c.vals[16*i:], 0)
			binary.LittleEndian.PutUint64(c.vals[16*i+8:], 0)
		case columnBytes:
			if !c.placed {
				c.offs[i+1] = int32(c.end)
			}
		}
		return
	}
	switch c.kind {
	case columnBool:
		if d.num != 0 {
			bitutil.SetBit(c.vals, i)
		}
	case columnInt8:
		c.vals[i] = byte(d.num)
	case columnInt16:
		binary.LittleEndian.PutUint16(c.vals[2*i:], uint16(d.num))
	case columnInt32:
		binary.LittleEndian.PutUint32(c.vals[4*i:], uint32(d.num))
	case columnInt64, columnFloat64:
		binary.LittleEndian.PutUint64(c.vals[8*i:], d.num)
	case columnFloat32:
		binary.LittleEndian.PutUint32(c.vals[4*i:], math.Float32bits(float32(math.Float64frombits(d.num))))
	case columnBytes:
		c.setString(i, d.str)
	case columnDecimal:
		hi, lo := d.Decimal()
		binary.LittleEndian.PutUint64(c.vals[16*i:], lo)
		binary.LittleEndian.PutUint64(c.vals[16*i+8:], uint64(hi))
	}
}

// setString stores s as value i of a variable-length column: at once, or
// for pack to lay out.
func (c *flushColumn) setString(i int, s string) {
	if c.placed {
		c.strs[i] = s
		c.pending += len(s)
		return
	}
	c.setBytes(i, s)
}

// pack lays out the values of a placed column in row order, in a buffer of
// their size, and returns the sum of the loads that touch each string a
// few rows ahead of its copy (its first line may miss the cache: the loads
// ahead overlap the misses).
func (c *flushColumn) pack() uint64 {
	if !c.placed {
		return 0
	}
	c.placed = false
	c.vals = reused(c.vals, c.pending)
	strs, vals, offs := c.strs, c.vals, c.offs[1:]
	var touched uint64
	end := 0
	for i, s := range strs {
		if j := i + packAhead; j < len(strs) && len(strs[j]) > 0 {
			touched += uint64(strs[j][0])
		}
		end += copy(vals[end:], s)
		offs[i] = int32(end)
	}
	c.end = end
	clear(strs) // keep no string alive
	return touched
}

// packAhead is how many strings ahead of its copy pack touches a string.
const packAhead = 8

// setBytes stores s as value i of a variable-length column.
func (c *flushColumn) setBytes(i int, s string) {
	if len(c.vals)-c.end < len(s) {
		c.grow(i, len(s))
	}
	c.end += copy(c.vals[c.end:], s)
	c.offs[i+1] = int32(c.end)
}

// grow makes room for value i of need bytes and, at the rate of the values
// before it, for the values after it, with an eighth more: an estimate that
// fell short costs one more copy, not a doubling per overflow.
func (c *flushColumn) grow(i, need int) {
	perRow := (c.end + need) / (i + 1)
	room := c.end + need + perRow*(c.n-i-1)/8*9 + 64
	vals := make([]byte, room)
	copy(vals, c.vals[:c.end])
	c.vals = vals
}

// setKey decodes the order-preserving encoding of one primary-key column
// from the front of src straight into value i (the inverse of appendKeyDatum
// for the column's type) and returns the bytes consumed.
func (c *flushColumn) setKey(i int, src string) (int, error) {
	if c.kind == columnBytes {
		return c.setKeyBytes(i, src)
	}
	w := max(c.width, 1)
	if len(src) < w {
		return 0, fmt.Errorf("key column of type %s: %d bytes left, need %d", c.typ, len(src), w)
	}
	switch c.kind {
	case columnBool:
		if src[0] != 0 {
			bitutil.SetBit(c.vals, i)
		}
	case columnInt8:
		c.vals[i] = src[0] ^ 0x80
	case columnInt16:
		binary.LittleEndian.PutUint16(c.vals[2*i:], be16(src)^0x8000)
	case columnInt32:
		binary.LittleEndian.PutUint32(c.vals[4*i:], be32(src)^0x80000000)
	case columnInt64:
		binary.LittleEndian.PutUint64(c.vals[8*i:], be64(src)^signBit8)
	case columnFloat32:
		b := be32(src)
		if b&0x80000000 != 0 {
			b &^= 0x80000000
		} else {
			b = ^b
		}
		binary.LittleEndian.PutUint32(c.vals[4*i:], b)
	case columnFloat64:
		b := be64(src)
		if b&signBit8 != 0 {
			b &^= signBit8
		} else {
			b = ^b
		}
		binary.LittleEndian.PutUint64(c.vals[8*i:], b)
	case columnDecimal:
		binary.LittleEndian.PutUint64(c.vals[16*i:], be64(src[8:]))
		binary.LittleEndian.PutUint64(c.vals[16*i+8:], be64(src)^signBit8)
	}
	return w, nil
}

// setKeyDatum stores the datum of a primary-key column as value i, as
// setKey stores its encoding (appendKeyDatum): a float's NaN as the
// encoding's one NaN, a boolean's lowest bit. A variable-length column's
// values are set in order, unless placed.
func (c *flushColumn) setKeyDatum(i int, d *Datum) error {
	if d.IsNull() {
		return fmt.Errorf("NULL in a key column of type %s", c.typ)
	}
	switch c.kind {
	case columnBool:
		if d.num&1 != 0 {
			bitutil.SetBit(c.vals, i)
		}
	case columnInt8:
		c.vals[i] = byte(d.num)
	case columnInt16:
		binary.LittleEndian.PutUint16(c.vals[2*i:], uint16(d.num))
	case columnInt32:
		binary.LittleEndian.PutUint32(c.vals[4*i:], uint32(d.num))
	case columnInt64:
		binary.LittleEndian.PutUint64(c.vals[8*i:], d.num)
	case columnFloat32:
		f := float32(d.Float())
		if f != f {
			f = float32(math.NaN())
		}
		binary.LittleEndian.PutUint32(c.vals[4*i:], math.Float32bits(f))
	case columnFloat64:
		f := d.Float()
		if f != f {
			f = math.NaN()
		}
		binary.LittleEndian.PutUint64(c.vals[8*i:], math.Float64bits(f))
	case columnBytes:
		c.setString(i, d.str)
	case columnDecimal:
		hi, lo := d.Decimal()
		binary.LittleEndian.PutUint64(c.vals[16*i:], lo)
		binary.LittleEndian.PutUint64(c.vals[16*i+8:], uint64(hi))
	}
	return nil
}

// setKeyBytes decodes an escaped string key column into value i.
func (c *flushColumn) setKeyBytes(i int, src string) (int, error) {
	for at := 0; ; {
		j := strings.IndexByte(src[at:], escByte)
		if j < 0 || at+j+1 >= len(src) {
			return 0, fmt.Errorf("key column of type %s: unterminated string", c.typ)
		}
		j += at
		switch src[j+1] {
		case escTerm:
			c.setBytes(i, src[at:j])
			return j + 2, nil
		case escEsc:
			// The escaped zero byte goes with the run before it; value
			// i ends at the terminator.
			c.setBytes(i, src[at:j+1])
			at = j + 2
		default:
			return 0, fmt.Errorf("key column of type %s: bad escape 0x%02x", c.typ, src[j+1])
		}
	}
}

// array hands the column's buffers to an Arrow array; the column starts
// anew before its next use, in them if they were recycled.
func (c *flushColumn) array() arrow.Array {
	var valid *memory.Buffer
	if c.nulls > 0 {
		// The bits past the last value are clear, as Arrow's builders
		// leave them.
		for k := c.n; k < 8*len(c.valid); k++ {
			bitutil.ClearBit(c.valid, k)
		}
		valid = memory.NewBufferBytes(c.valid)
	}
	bufs := []*memory.Buffer{valid, memory.NewBufferBytes(c.vals)}
	if c.kind == columnBytes {
		bufs = []*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offs)), memory.NewBufferBytes(c.vals[:c.end])}
		c.lastBytes, c.lastRows = c.end, c.n
	}
	data := array.NewData(c.typ, c.n, bufs, nil, c.nulls, 0)
	defer data.Release()
	c.lent = columnBuffers{valid: c.valid, vals: c.vals, offs: c.offs}
	c.valid, c.vals, c.offs = nil, nil, nil
	return array.MakeFromData(data)
}
