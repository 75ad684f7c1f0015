package table

import "github.com/parquet-go/parquet-go"

// parquet-go asks a page for its bounds (its min and max value) twice as it
// writes it: once for the statistics of the page header, once for the
// column index and the column chunk statistics. Each call compares every
// value of the page, which for a page of strings is most of the cost of
// writing it. The leaf types of a data file's schema therefore make column
// buffers whose pages compute their bounds once: the values, and so the
// bytes written, are the same.

// boundsOnceNode is a leaf whose type makes boundsOnceBuffers.
type boundsOnceNode struct{ parquet.Node }

func (n boundsOnceNode) Type() parquet.Type { return boundsOnceType{n.Node.Type()} }

type boundsOnceType struct{ parquet.Type }

func (t boundsOnceType) NewColumnBuffer(columnIndex, numValues int) parquet.ColumnBuffer {
	return &boundsOnceBuffer{ColumnBuffer: t.Type.NewColumnBuffer(columnIndex, numValues)}
}

// boundsOnceBuffer is a column buffer whose page remembers its bounds. A
// column writer uses the page of its buffer to write it out before it
// writes to the buffer again, so the buffer keeps one page and resets it
// on each call of Page.
type boundsOnceBuffer struct {
	parquet.ColumnBuffer
	page boundsOncePage
}

func (b *boundsOnceBuffer) Page() parquet.Page {
	b.page = boundsOncePage{Page: b.ColumnBuffer.Page()}
	return &b.page
}

type boundsOncePage struct {
	parquet.Page
	known    bool
	min, max parquet.Value
	ok       bool
}

func (p *boundsOncePage) Bounds() (min, max parquet.Value, ok bool) {
	if !p.known {
		p.min, p.max, p.ok = p.Page.Bounds()
		p.known = true
	}
	return p.min, p.max, p.ok
}
