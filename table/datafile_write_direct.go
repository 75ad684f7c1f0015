package table

import (
	"bufio"
	"bytes"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// pageWriter writes the parquet file of a DataFileWriter itself, from the
// Arrow buffers, where parquet-go's writer took a parquet.Value per cell
// into column buffers, re-encoded them and compared every value of a page
// twice for its bounds: a page's PLAIN values are the Arrow values' bytes
// (little-endian fixed width, or length-prefixed byte arrays), appended
// once. The file is byte for byte the one parquet-go writes with the
// data file's options (TestDirectWriterMatches*): the same pages,
// cut at the same rows, page statistics, CRCs, column and offset indexes,
// size statistics and footer, through parquet-go's own level, dictionary
// index and thrift encoders, column indexers and bound comparisons; what
// parquet-go adds per file (its schema elements, column orders, created-by)
// comes from a file it wrote once per kit (directTemplate). Schemas with a
// column of BOOLEAN, INT96 (timestamps above precision 6) or fixed-length
// bytes (decimals above precision 18) keep parquet-go's writer.
type pageWriter struct {
	tmpl   *directTemplate
	bw     *bufio.Writer // over the file's counting writer, as parquet-go's
	offset int64         // bytes handed to bw
	cols   []pageColumn
	bufMax int // a column's buffered values past this end its page (parquet-go's page buffer)

	rowGroups  []format.RowGroup
	colIndexes [][]format.ColumnIndex
	offIndexes [][]format.OffsetIndex
	md         format.FileMetaData

	proto thrift.CompactProtocol
	hdr   bytes.Buffer
	enc   *thrift.Encoder
	body  []byte // a page's levels and values
	hdrB  []byte // a data page's header
	minB  []byte // a page's bounds, PLAIN
	maxB  []byte
	comp  []byte // a page compressed
}

// pageColumn is one leaf column: the values of its open page and the
// pages and metadata of its open column chunk.
type pageColumn struct {
	typ      parquet.Type
	kind     parquet.Kind
	width    int // PLAIN bytes of a fixed-width value, 0 for byte arrays
	optional bool
	dict     bool // RLE_DICTIONARY of INT32 values (_VALUE_KIND)
	codec    compress.Codec

	// the open page
	plain []byte // PLAIN values of its non-null rows
	// ref, when set, holds the page's PLAIN values in place of plain: the
	// bytes of a Write's Arrow column, for a page of fixed-width values
	// that one append filled (detach copies them before the Write returns)
	ref        []byte
	levels     []byte  // definition levels (optional columns)
	idx        []int32 // dictionary indexes (dict)
	rows       int
	nulls      int
	minOff     int // byte arrays: offsets in plain of the bounds' length prefixes
	maxOff     int
	byteValues int64 // byte arrays: bytes of the non-null values

	// the open column chunk
	pages       *pageBuffer // nil before its first page
	dictVals    []int32
	chunk       format.ColumnChunk
	offIdx      format.OffsetIndex
	indexer     parquet.ColumnIndexer
	chunkRows   int64
	unencoded   int64
	defHist     []int64
	pageDefHist []int64
}

// directTemplate is what every file of a kit's schema carries unchanged.
type directTemplate struct {
	schema       []format.SchemaElement
	columnOrders []format.ColumnOrder
	keyValues    []format.KeyValue
	createdBy    string
}

var levelEncoding = rle.Encoding{BitWidth: 1}

// directOK reports whether the page writer writes files of s: every field
// of a type whose PLAIN values it takes from Arrow.
func directOK(s *Schema) bool {
	for _, f := range s.Fields {
		switch f.Type.Root {
		case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt, TypeFloat, TypeDouble,
			TypeString, TypeBytes, TypeDate:
		case TypeDecimal:
			if f.Type.Precision > 18 {
				return false
			}
		case TypeTimestamp:
			if f.Type.Precision > 6 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// newDirectTemplate takes the schema elements, column orders and created-by
// that parquet-go writes for cfg from an empty file it writes.
func newDirectTemplate(cfg []parquet.WriterOption) (*directTemplate, error) {
	pw := parquet.NewWriter(io.Discard, cfg...)
	if err := pw.Close(); err != nil {
		return nil, err
	}
	md := pw.File().Metadata()
	return &directTemplate{
		schema:       slices.Clone(md.Schema),
		columnOrders: slices.Clone(md.ColumnOrders),
		keyValues:    make([]format.KeyValue, 0),
		createdBy:    md.CreatedBy,
	}, nil
}

// newPageWriter writes through out the file of a kit's layout, with each
// leaf's codec (nil: uncompressed).
func newPageWriter(tmpl *directTemplate, l *dataFileLayout, codecs []compress.Codec, out io.Writer, pageBuffer int) *pageWriter {
	w := &pageWriter{tmpl: tmpl, bw: bufio.NewWriterSize(out, parquet.DefaultWriteBufferSize), bufMax: int(int32(float64(pageBuffer) * 0.98))}
	w.enc = thrift.NewEncoder(w.proto.NewWriter(&w.hdr))
	w.cols = make([]pageColumn, len(l.fields))
	for i, f := range l.fields {
		c := &w.cols[i]
		c.typ = f.Node.Type()
		c.kind = c.typ.Kind()
		c.width = fixedPhysicalWidth(c.typ)
		c.optional = f.Node.Optional()
		c.dict = i == l.kindCol()
		c.codec = codecs[i]
		c.indexer = c.typ.NewColumnIndexer(64)
		var encs []format.Encoding
		if c.optional {
			c.defHist = make([]int64, 2)
			encs = append(encs, format.RLE)
		}
		enc := format.Plain
		if c.dict {
			encs = append(encs, format.Plain)
			enc = format.RLEDictionary
		}
		if !slices.Contains(encs, enc) {
			encs = append(encs, enc)
		}
		slices.Sort(encs)
		codec := format.Uncompressed
		if c.codec != nil {
			codec = c.codec.CompressionCodec()
		}
		c.chunk.MetaData = format.ColumnMetaData{
			Type:         format.Type(c.kind),
			Encoding:     encs,
			PathInSchema: []string{f.name},
			Codec:        codec,
		}
	}
	return w
}

// legacyDataFileWriter makes every DataFileWriter use parquet-go's writer,
// for tests that compare the two.
var legacyDataFileWriter = false

// appendRows appends rows [lo,hi) of every column to the open pages, in the
// order parquet-go's column writers took them (DataFileWriter.writeRows).
func (w *pageWriter) appendRows(l *dataFileLayout, keyField []bool, rec arrow.Record, keyCols []arrow.Array, seqs []int64, kinds []ValueKind, lo, hi int) error {
	for k, a := range keyCols {
		// The key field's own column holds the _KEY_ column's values, its
		// pages cut at the same rows (their buffered sizes are equal): it
		// takes a copy of the key column's open page.
		key, field := &w.cols[k], &w.cols[l.fieldCol(l.keyIdx[k])]
		w.appendArrow(key, a, l.keyTypes[k], lo, hi)
		field.copyPage(key)
		if err := w.afterAppend(key); err != nil {
			return err
		}
		if err := w.afterAppend(field); err != nil {
			return err
		}
	}
	seq := &w.cols[l.seqCol()]
	seq.appendInt64s(seqs[lo:hi])
	if err := w.afterAppend(seq); err != nil {
		return err
	}
	kind := &w.cols[l.kindCol()]
	var ks []ValueKind
	if kinds != nil {
		ks = kinds[lo:hi]
	}
	kind.appendKinds(ks, hi-lo)
	if err := w.afterAppend(kind); err != nil {
		return err
	}
	for f, fd := range l.schema.Fields {
		if keyField[f] {
			continue
		}
		c := &w.cols[l.fieldCol(f)]
		w.appendArrow(c, rec.Column(f), fd.Type, lo, hi)
		if err := w.afterAppend(c); err != nil {
			return err
		}
	}
	return nil
}

// reset readies a released writer for a file written through out.
func (w *pageWriter) reset(out io.Writer) {
	w.bw.Reset(out)
	w.offset = 0
}

// release drops what the last file handed out (its footer's row groups and
// indexes) and empties the open pages of a file that was not closed.
func (w *pageWriter) release() {
	w.rowGroups, w.colIndexes, w.offIndexes, w.md = nil, nil, nil, format.FileMetaData{}
	w.bw.Reset(nil)
	for i := range w.cols {
		c := &w.cols[i]
		c.plain, c.levels, c.idx, c.ref = c.plain[:0], c.levels[:0], c.idx[:0], nil
		c.rows, c.nulls, c.byteValues = 0, 0, 0
		c.resetChunk()
	}
}

// detach copies the values the open pages reference out of the Write's
// record, which its caller may release or reuse once the Write returns.
func (w *pageWriter) detach() {
	for i := range w.cols {
		w.cols[i].detach()
	}
}
