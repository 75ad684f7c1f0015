package subtask

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// flushColumn accumulates one column of a flush record in the Arrow layout
// itself (validity bitmap, little-endian values, offsets and bytes), sized
// for the flush up front, so appending a datum is a store and no builder
// grows, copies or dispatches per value. The buffers go to the record and
// are made anew for every flush.
type flushColumn struct {
	typ   arrow.DataType
	kind  columnKind
	n     int
	nulls int
	valid []byte
	vals  []byte  // fixed-width values, a boolean bitmap, or variable-length bytes
	offs  []int32 // variable-length columns
	// The bytes and rows of the column's last flush: a variable-length
	// column's room is sized from them, since counting the bytes first
	// would visit every row's datums twice.
	lastBytes, lastRows int
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
		c.kind = columnInt8
	case arrow.INT16:
		c.kind = columnInt16
	case arrow.INT32, arrow.DATE32:
		c.kind = columnInt32
	case arrow.INT64, arrow.TIMESTAMP:
		c.kind = columnInt64
	case arrow.FLOAT32:
		c.kind = columnFloat32
	case arrow.FLOAT64:
		c.kind = columnFloat64
	case arrow.STRING, arrow.BINARY:
		c.kind = columnBytes
	case arrow.DECIMAL128:
		c.kind = columnDecimal
	default:
		return c, fmt.Errorf("arrow type %s has no flush column", t)
	}
	return c, nil
}

// width is the bytes of one fixed-width value (0: a bitmap or variable).
func (c *flushColumn) width() int {
	switch c.kind {
	case columnInt8:
		return 1
	case columnInt16:
		return 2
	case columnInt32, columnFloat32:
		return 4
	case columnInt64, columnFloat64:
		return 8
	case columnDecimal:
		return 16
	}
	return 0
}

// start makes room for n values; a variable-length column's bytes are at
// least data, or as many per row as in its last flush, with an eighth more.
func (c *flushColumn) start(n, data int) {
	if c.lastRows > 0 {
		data = max(data, int(int64(c.lastBytes)*int64(n)/int64(c.lastRows)*9/8))
	}
	c.n, c.nulls = 0, 0
	c.valid = make([]byte, bitmapBytes(n))
	switch c.kind {
	case columnBool:
		c.vals = make([]byte, bitmapBytes(n))
	case columnBytes:
		c.offs = make([]int32, 1, n+1)
		c.vals = make([]byte, 0, data)
	default:
		c.vals = make([]byte, 0, n*c.width())
	}
}

// bitmapBytes is the size of a bitmap of n bits, in whole 64-bit words.
func bitmapBytes(n int) int { return (n + 63) / 64 * 8 }

func (c *flushColumn) append(d *Datum) {
	i := c.n
	c.n++
	if !d.set {
		c.nulls++
		switch c.kind {
		case columnBool:
		case columnBytes:
			c.offs = append(c.offs, int32(len(c.vals)))
		default:
			c.vals = append(c.vals, zeroValue[:c.width()]...)
		}
		return
	}
	bitutil.SetBit(c.valid, i)
	switch c.kind {
	case columnBool:
		if d.num != 0 {
			bitutil.SetBit(c.vals, i)
		}
	case columnInt8:
		c.vals = append(c.vals, byte(d.num))
	case columnInt16:
		c.vals = binary.LittleEndian.AppendUint16(c.vals, uint16(d.num))
	case columnInt32:
		c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(d.num))
	case columnInt64, columnFloat64:
		c.vals = binary.LittleEndian.AppendUint64(c.vals, d.num)
	case columnFloat32:
		c.vals = binary.LittleEndian.AppendUint32(c.vals, math.Float32bits(float32(math.Float64frombits(d.num))))
	case columnBytes:
		c.vals = append(c.vals, d.str...)
		c.offs = append(c.offs, int32(len(c.vals)))
	case columnDecimal:
		c.vals = binary.LittleEndian.AppendUint64(c.vals, d.num)
		c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(d.hi))
	}
}

var zeroValue [16]byte

// array hands the column's buffers to an Arrow array; the column starts
// anew before its next use.
func (c *flushColumn) array() arrow.Array {
	var valid *memory.Buffer
	if c.nulls > 0 {
		valid = memory.NewBufferBytes(c.valid)
	}
	bufs := []*memory.Buffer{valid, memory.NewBufferBytes(c.vals)}
	if c.kind == columnBytes {
		bufs = []*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offs)), memory.NewBufferBytes(c.vals)}
	}
	data := array.NewData(c.typ, c.n, bufs, nil, c.nulls, 0)
	defer data.Release()
	if c.kind == columnBytes {
		c.lastBytes, c.lastRows = len(c.vals), c.n
	}
	c.valid, c.vals, c.offs = nil, nil, nil
	return array.MakeFromData(data)
}
