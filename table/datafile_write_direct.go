package table

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
// data file's options (TestDirectWriterMatchesParquetGo): the same pages,
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

// bytesOf is the memory of a slice of fixed-width values.
func bytesOf[T any](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// appendArrow appends rows [lo,hi) of a column to column c's open page.
func (w *pageWriter) appendArrow(c *pageColumn, a arrow.Array, t DataType, lo, hi int) {
	n := hi - lo
	nulls := 0
	if c.optional {
		start := len(c.levels)
		c.levels = slices.Grow(c.levels, n)[:start+n]
		lv := c.levels[start:]
		if a.NullN() == 0 {
			for i := range lv {
				lv[i] = 1
			}
		} else {
			for i := range lv {
				if a.IsNull(lo + i) {
					lv[i] = 0
					nulls++
				} else {
					lv[i] = 1
				}
			}
		}
	}
	c.rows += n
	c.nulls += nulls
	if nulls == 0 {
		switch v := a.(type) {
		case *array.Int64:
			c.appendFixed(bytesOf(v.Int64Values()[lo:hi]), n)
			return
		case *array.Int32:
			c.appendFixed(bytesOf(v.Int32Values()[lo:hi]), n)
			return
		case *array.Date32:
			c.appendFixed(bytesOf(v.Date32Values()[lo:hi]), n)
			return
		case *array.Timestamp:
			c.appendFixed(bytesOf(v.TimestampValues()[lo:hi]), n)
			return
		case *array.Float64:
			c.appendFixed(bytesOf(v.Float64Values()[lo:hi]), n)
			return
		case *array.Float32:
			c.appendFixed(bytesOf(v.Float32Values()[lo:hi]), n)
			return
		}
	}
	c.detach()
	valid := func(i int) bool { return nulls == 0 || !a.IsNull(i) }
	switch v := a.(type) {
	case *array.Int64:
		appendValid(c, v.Int64Values(), lo, hi, valid)
	case *array.Int32:
		appendValid(c, v.Int32Values(), lo, hi, valid)
	case *array.Date32:
		appendValid(c, v.Date32Values(), lo, hi, valid)
	case *array.Timestamp:
		appendValid(c, v.TimestampValues(), lo, hi, valid)
	case *array.Float64:
		appendValid(c, v.Float64Values(), lo, hi, valid)
	case *array.Float32:
		appendValid(c, v.Float32Values(), lo, hi, valid)
	case *array.Int8:
		for i, x := range v.Int8Values()[lo:hi] {
			if valid(lo + i) {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(int32(x)))
			}
		}
	case *array.Int16:
		for i, x := range v.Int16Values()[lo:hi] {
			if valid(lo + i) {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(int32(x)))
			}
		}
	case *array.Decimal128:
		for i := lo; i < hi; i++ {
			if !valid(i) {
				continue
			}
			low := v.Value(i).LowBits()
			if t.Precision <= 9 {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(low))
			} else {
				c.plain = binary.LittleEndian.AppendUint64(c.plain, low)
			}
		}
	case *array.String:
		offs, data := v.ValueOffsets(), v.ValueBytes()
		w.appendByteArrays(c, data, offs, lo, hi, valid)
	case *array.Binary:
		offs, data := v.ValueOffsets(), v.ValueBytes()
		w.appendByteArrays(c, data, offs, lo, hi, valid)
	default:
		panic(fmt.Sprintf("data file: page writer got arrow array %T", a))
	}
}

// appendFixed appends the PLAIN bytes of n values (all the appended rows'):
// by reference when they start the page.
func (c *pageColumn) appendFixed(b []byte, n int) {
	if c.rows == n {
		c.ref = b
		return
	}
	c.detach()
	c.plain = append(c.plain, b...)
}

// detach copies referenced values into plain.
func (c *pageColumn) detach() {
	if c.ref != nil {
		c.plain = append(c.plain[:0], c.ref...)
		c.ref = nil
	}
}

// values is the page's PLAIN values.
func (c *pageColumn) values() []byte {
	if c.ref != nil {
		return c.ref
	}
	return c.plain
}

func appendValid[T any](c *pageColumn, vs []T, lo, hi int, valid func(int) bool) {
	for i := lo; i < hi; i++ {
		if valid(i) {
			c.plain = append(c.plain, bytesOf(vs[i:i+1])...)
		}
	}
}

// appendByteArrays appends the valid values of rows [lo,hi) as PLAIN byte
// arrays and keeps the page's bounds (bytes.Compare, as parquet-go's byte
// array pages compare).
func (w *pageWriter) appendByteArrays(c *pageColumn, data []byte, offs []int32, lo, hi int, valid func(int) bool) {
	base := offs[0]
	c.plain = slices.Grow(c.plain, int(offs[hi]-offs[lo])+4*(hi-lo))
	for i := lo; i < hi; i++ {
		if !valid(i) {
			continue
		}
		v := data[offs[i]-base : offs[i+1]-base]
		at := len(c.plain)
		c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(v)))
		c.plain = append(c.plain, v...)
		c.byteValues += int64(len(v))
		if at == 0 {
			c.minOff, c.maxOff = 0, 0
			continue
		}
		if bytes.Compare(v, c.byteArrayAt(c.minOff)) < 0 {
			c.minOff = at
		} else if bytes.Compare(v, c.byteArrayAt(c.maxOff)) > 0 {
			c.maxOff = at
		}
	}
}

// byteArrayAt is the byte array whose length prefix is at off of plain.
func (c *pageColumn) byteArrayAt(off int) []byte {
	n := int(binary.LittleEndian.Uint32(c.plain[off:]))
	return c.plain[off+4 : off+4+n]
}

// appendInt64s appends required INT64 values (sequence numbers).
func (c *pageColumn) appendInt64s(vs []int64) {
	c.rows += len(vs)
	c.appendFixed(bytesOf(vs), len(vs))
}

// appendKinds appends value kinds as indexes of the chunk's dictionary.
func (c *pageColumn) appendKinds(kinds []ValueKind, n int) {
	for i := range n {
		k := int32(KindInsert)
		if kinds != nil {
			k = int32(kinds[i])
		}
		at := slices.Index(c.dictVals, k)
		if at < 0 {
			at = len(c.dictVals)
			c.dictVals = append(c.dictVals, k)
		}
		c.idx = append(c.idx, int32(at))
	}
	c.rows += n
}

// bufferedSize is parquet-go's size of the column's buffered values (its
// column buffer's Size), which decides page and row group cuts.
func (c *pageColumn) bufferedSize() int {
	if c.dict {
		return 4 * len(c.idx)
	}
	n := len(c.values())
	if c.optional {
		n += 4*c.rows + len(c.levels)
	}
	return n
}

// afterAppend ends the open page of a column whose buffered values reached
// parquet-go's page buffer size, as its column writer does.
func (w *pageWriter) afterAppend(c *pageColumn) error {
	if c.bufferedSize() >= w.bufMax {
		return w.flushPage(c)
	}
	return nil
}

// bounds are the page's min and max values, as parquet-go's pages compute
// them, and whether it has any.
func (w *pageWriter) bounds(c *pageColumn) (parquet.Value, parquet.Value, bool) {
	switch {
	case c.dict:
		if len(c.idx) == 0 {
			return parquet.Value{}, parquet.Value{}, false
		}
		lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
		for _, x := range c.idx {
			v := c.dictVals[x]
			lo, hi = min(lo, v), max(hi, v)
		}
		return parquet.Int32Value(lo), parquet.Int32Value(hi), true
	case c.rows == c.nulls:
		return parquet.Value{}, parquet.Value{}, false
	case c.width == 0 && c.byteValues == 0:
		// parquet-go's page of empty values holds no bytes, and its bounds
		// are nil slices, which statistics leave out
		return parquet.ByteArrayValue(nil), parquet.ByteArrayValue(nil), true
	case c.width == 0:
		return parquet.ByteArrayValue(c.byteArrayAt(c.minOff)), parquet.ByteArrayValue(c.byteArrayAt(c.maxOff)), true
	}
	switch c.kind {
	case parquet.Int64:
		lo, hi := intBounds(unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(c.values()))), c.rows-c.nulls))
		return parquet.Int64Value(lo), parquet.Int64Value(hi), true
	case parquet.Int32:
		lo, hi := intBounds(unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(c.values()))), c.rows-c.nulls))
		return parquet.Int32Value(lo), parquet.Int32Value(hi), true
	}
	// floats: parquet-go's own bounds (NaN, signed zeros)
	return c.typ.NewPage(0, c.rows-c.nulls, c.typ.NewValues(c.values(), nil)).Bounds()
}

// flushPage encodes the open page of a column into its chunk.
func (w *pageWriter) flushPage(c *pageColumn) error {
	if c.rows == 0 {
		return nil
	}
	minV, maxV, ok := w.bounds(c)
	enc := format.Plain
	body := c.values()
	var err error
	switch {
	case c.dict:
		enc = format.RLEDictionary
		if w.body, err = parquet.RLEDictionary.EncodeInt32(w.body[:0], c.idx); err != nil {
			return err
		}
		body = w.body
	case c.optional:
		var lv []byte
		if w.comp, err = levelEncoding.EncodeLevels(w.comp[:0], c.levels); err != nil {
			return err
		}
		lv = w.comp
		w.body = binary.LittleEndian.AppendUint32(w.body[:0], uint32(len(lv)))
		w.body = append(w.body, lv...)
		w.body = append(w.body, c.values()...)
		body = w.body
	}
	uncompressed := len(body)
	if c.codec != nil {
		if w.comp, err = c.codec.Encode(w.comp[:0], body); err != nil {
			return fmt.Errorf("compressing page: %w", err)
		}
		body = w.comp
	}
	var minB, maxB []byte
	if ok && c.width > 0 {
		minB, maxB = minV.AppendBytes(w.minB[:0]), maxV.AppendBytes(w.maxB[:0])
		w.minB, w.maxB = minB, maxB
	} else {
		minB, maxB = minV.Bytes(), maxV.Bytes() // nil without bounds
	}
	w.hdrB = appendDataPageHeader(w.hdrB[:0], int32(uncompressed), int32(len(body)), int32(crc32.ChecksumIEEE(body)),
		int32(c.rows), enc, minB, maxB, int64(c.nulls))
	hlen := len(w.hdrB)

	m := &c.chunk.MetaData
	c.indexer.IndexPage(int64(c.rows), int64(c.nulls), minV, maxV)
	m.NumValues += int64(c.rows)
	m.Statistics.NullCount += int64(c.nulls)
	if ok {
		c.foldChunkBounds(minV, maxV)
	}
	c.offIdx.PageLocations = append(c.offIdx.PageLocations, format.PageLocation{
		Offset:             m.TotalCompressedSize,
		CompressedPageSize: int32(hlen + len(body)),
		FirstRowIndex:      c.chunkRows,
	})
	c.chunkRows += int64(c.rows)
	if c.width == 0 && !c.dict {
		c.unencoded += c.byteValues
	}
	if c.optional {
		nonNull := int64(c.rows - c.nulls)
		c.defHist[0] += int64(c.nulls)
		c.defHist[1] += nonNull
		c.pageDefHist = append(c.pageDefHist, int64(c.nulls), nonNull)
	}
	c.recordSizes(hlen, uncompressed, len(body), format.DataPage, enc)
	if c.pages == nil {
		c.pages = pageBuffers.GetBuffer().(*pageBuffer)
	}
	_, _ = c.pages.Write(w.hdrB)
	_, _ = c.pages.Write(body)

	c.plain, c.levels, c.idx, c.ref = c.plain[:0], c.levels[:0], c.idx[:0], nil
	c.rows, c.nulls, c.byteValues = 0, 0, 0
	return nil
}

// foldChunkBounds widens the chunk statistics by a page's bounds, as
// parquet-go's column writer does.
func (c *pageColumn) foldChunkBounds(minV, maxV parquet.Value) {
	st := &c.chunk.MetaData.Statistics
	var oldMax, oldMin parquet.Value
	if st.MaxValue != nil && st.MinValue != nil {
		oldMax, oldMin = c.kind.Value(st.MaxValue), c.kind.Value(st.MinValue)
	}
	if oldMax.IsNull() || c.typ.Compare(maxV, oldMax) > 0 {
		buf := st.MaxValue[:0]
		if buf == nil && maxV.Kind() == parquet.ByteArray && len(maxV.ByteArray()) == 0 {
			buf = make([]byte, 0)
		}
		st.MaxValue = maxV.AppendBytes(buf)
	}
	if oldMin.IsNull() || c.typ.Compare(minV, oldMin) < 0 {
		buf := st.MinValue[:0]
		if buf == nil && minV.Kind() == parquet.ByteArray && len(minV.ByteArray()) == 0 {
			buf = make([]byte, 0)
		}
		st.MinValue = minV.AppendBytes(buf)
	}
}

func (c *pageColumn) recordSizes(hlen, uncompressed, compressed int, typ format.PageType, enc format.Encoding) {
	m := &c.chunk.MetaData
	m.TotalUncompressedSize += int64(hlen + uncompressed)
	m.TotalCompressedSize += int64(hlen + compressed)
	for i, st := range m.EncodingStats {
		if st.PageType == typ && st.Encoding == enc {
			m.EncodingStats[i].Count++
			return
		}
	}
	m.EncodingStats = append(m.EncodingStats, format.PageEncodingStats{PageType: typ, Encoding: enc, Count: 1})
}

// flushPages ends the open page of every column.
func (w *pageWriter) flushPages() error {
	for i := range w.cols {
		if err := w.flushPage(&w.cols[i]); err != nil {
			return err
		}
	}
	return nil
}

// size is parquet-go's Writer.Size: bytes written, plus the open row
// group's pages and buffered values.
func (w *pageWriter) size() int64 {
	n := w.offset
	for i := range w.cols {
		c := &w.cols[i]
		n += c.chunk.MetaData.TotalCompressedSize + int64(c.bufferedSize()) + 4*int64(len(c.dictVals))
	}
	return n
}

func (w *pageWriter) write(p []byte) error {
	_, err := w.bw.Write(p)
	w.offset += int64(len(p))
	return err
}

// pageSink hands a column chunk's pages to the file as parquet-go's
// writer hands them on: pageBuffer.WriteTo writes them a chunk per Write,
// so the bytes that reach the file before Close (row group cuts read
// them) are the same.
type pageSink struct{ w *pageWriter }

func (s pageSink) Write(p []byte) (int, error) {
	if err := s.w.write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// endRowGroup writes the open row group out.
func (w *pageWriter) endRowGroup() error {
	if err := w.flushPages(); err != nil {
		return err
	}
	numRows := w.cols[0].chunkRows
	if numRows == 0 {
		return nil
	}
	if w.offset == 0 {
		if err := w.write([]byte("PAR1")); err != nil {
			return err
		}
	}
	fileOffset := w.offset
	cis := make([]format.ColumnIndex, len(w.cols))
	chunks := make([]format.ColumnChunk, len(w.cols))
	ois := make([]format.OffsetIndex, len(w.cols))
	var totalBytes, totalCompressed int64
	for i := range w.cols {
		c := &w.cols[i]
		m := &c.chunk.MetaData
		ci := c.indexer.ColumnIndex()
		ci.RepetitionLevelHistogram = ci.RepetitionLevelHistogram[:0]
		ci.DefinitionLevelHistogram = append(ci.DefinitionLevelHistogram[:0], c.pageDefHist...)
		cis[i] = ci
		m.SizeStatistics = format.SizeStatistics{
			UnencodedByteArrayDataBytes: c.unencoded,
			DefinitionLevelHistogram:    slices.Clone(c.defHist),
		}
		if c.dict {
			m.DictionaryPageOffset = w.offset
			if err := w.writeDictionaryPage(c); err != nil {
				return err
			}
		}
		m.DataPageOffset = w.offset
		for j := range c.offIdx.PageLocations {
			c.offIdx.PageLocations[j].Offset += m.DataPageOffset
		}
		if c.pages != nil {
			c.pages.at = 0
			if _, err := c.pages.WriteTo(pageSink{w}); err != nil {
				return err
			}
		}
	}
	for i := range w.cols {
		m := &w.cols[i].chunk.MetaData
		slices.SortFunc(m.EncodingStats, func(a, b format.PageEncodingStats) int {
			if a.PageType != b.PageType {
				return int(a.PageType) - int(b.PageType)
			}
			return int(a.Encoding) - int(b.Encoding)
		})
		totalBytes += m.TotalUncompressedSize
		totalCompressed += m.TotalCompressedSize
	}
	for i := range w.cols {
		c := &w.cols[i]
		chunks[i] = c.chunk
		chunks[i].MetaData.EncodingStats = slices.Clone(c.chunk.MetaData.EncodingStats)
		ois[i] = format.OffsetIndex{PageLocations: slices.Clone(c.offIdx.PageLocations)}
	}
	w.colIndexes = append(w.colIndexes, cis)
	w.offIndexes = append(w.offIndexes, ois)
	w.rowGroups = append(w.rowGroups, format.RowGroup{
		Columns:             chunks,
		TotalByteSize:       totalBytes,
		NumRows:             numRows,
		SortingColumns:      make([]format.SortingColumn, 0),
		FileOffset:          fileOffset,
		TotalCompressedSize: totalCompressed,
		Ordinal:             int16(len(w.rowGroups)),
	})
	for i := range w.cols {
		w.cols[i].resetChunk()
	}
	return nil
}

// resetChunk empties the column's chunk for the next row group.
func (c *pageColumn) resetChunk() {
	m := &c.chunk.MetaData
	m.NumValues, m.TotalUncompressedSize, m.TotalCompressedSize = 0, 0, 0
	m.DataPageOffset, m.DictionaryPageOffset = 0, 0
	m.Statistics = format.Statistics{}
	m.EncodingStats = m.EncodingStats[:0]
	c.offIdx.PageLocations = c.offIdx.PageLocations[:0]
	c.indexer.Reset()
	if c.pages != nil {
		pageBuffers.PutBuffer(c.pages)
		c.pages = nil
	}
	c.dictVals = c.dictVals[:0]
	c.chunkRows, c.unencoded = 0, 0
	clear(c.defHist)
	c.pageDefHist = c.pageDefHist[:0]
}

// writeDictionaryPage writes the chunk's dictionary: its INT32 values PLAIN.
func (w *pageWriter) writeDictionaryPage(c *pageColumn) error {
	body := append(w.body[:0], bytesOf(c.dictVals)...)
	w.body = body
	uncompressed := len(body)
	if c.codec != nil {
		var err error
		if w.comp, err = c.codec.Encode(w.comp[:0], body); err != nil {
			return fmt.Errorf("compressing dictionary page: %w", err)
		}
		body = w.comp
	}
	var h format.PageHeader
	h.Type = format.DictionaryPage
	h.UncompressedPageSize = int32(uncompressed)
	h.CompressedPageSize = int32(len(body))
	h.CRC = int32(crc32.ChecksumIEEE(body))
	h.DictionaryPageHeader.Valid = true
	h.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: int32(len(c.dictVals)), Encoding: format.Plain}
	w.hdr.Reset()
	if err := w.enc.Encode(&h); err != nil {
		return err
	}
	hlen := w.hdr.Len()
	if err := w.write(w.hdr.Bytes()); err != nil {
		return err
	}
	if err := w.write(body); err != nil {
		return err
	}
	c.recordSizes(hlen, uncompressed, len(body), format.DictionaryPage, format.Plain)
	return nil
}

// close ends the last row group and writes the page indexes and footer.
func (w *pageWriter) close() error {
	if err := w.endRowGroup(); err != nil {
		return err
	}
	if w.offset == 0 {
		if err := w.write([]byte("PAR1")); err != nil {
			return err
		}
	}
	for i := range w.colIndexes {
		for j := range w.colIndexes[i] {
			c := &w.rowGroups[i].Columns[j]
			c.ColumnIndexOffset = w.offset
			if err := w.writeThrift(&w.colIndexes[i][j]); err != nil {
				return err
			}
			c.ColumnIndexLength = int32(w.offset - c.ColumnIndexOffset)
		}
	}
	for i := range w.offIndexes {
		for j := range w.offIndexes[i] {
			c := &w.rowGroups[i].Columns[j]
			c.OffsetIndexOffset = w.offset
			if err := w.writeThrift(&w.offIndexes[i][j]); err != nil {
				return err
			}
			c.OffsetIndexLength = int32(w.offset - c.OffsetIndexOffset)
		}
	}
	var numRows int64
	for _, rg := range w.rowGroups {
		numRows += rg.NumRows
	}
	w.md = format.FileMetaData{
		Version:          2,
		Schema:           w.tmpl.schema,
		NumRows:          numRows,
		RowGroups:        w.rowGroups,
		KeyValueMetadata: w.tmpl.keyValues,
		CreatedBy:        w.tmpl.createdBy,
		ColumnOrders:     w.tmpl.columnOrders,
	}
	start := w.offset
	if err := w.writeThrift(&w.md); err != nil {
		return err
	}
	var footer [8]byte
	binary.LittleEndian.PutUint32(footer[:4], uint32(w.offset-start))
	copy(footer[4:], "PAR1")
	if err := w.write(footer[:]); err != nil {
		return err
	}
	return w.bw.Flush()
}

func (w *pageWriter) writeThrift(v any) error {
	w.hdr.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	return w.write(w.hdr.Bytes())
}

// legacyDataFileWriter makes every DataFileWriter use parquet-go's writer,
// for tests that compare the two.
var legacyDataFileWriter = false

// appendRows appends rows [lo,hi) of every column to the open pages, in the
// order parquet-go's column writers took them (DataFileWriter.writeRows).
func (w *pageWriter) appendRows(l *dataFileLayout, keyField []bool, rec arrow.Record, keyCols []arrow.Array, seqs []int64, kinds []ValueKind, lo, hi int) error {
	for k, a := range keyCols {
		for _, ci := range [2]int{k, l.fieldCol(l.keyIdx[k])} {
			c := &w.cols[ci]
			w.appendArrow(c, a, l.keyTypes[k], lo, hi)
			if err := w.afterAppend(c); err != nil {
				return err
			}
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

// intBounds is the least and greatest of vs, not empty.
func intBounds[T int32 | int64](vs []T) (T, T) {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// detach copies the values the open pages reference out of the Write's
// record, which its caller may release or reuse once the Write returns.
func (w *pageWriter) detach() {
	for i := range w.cols {
		w.cols[i].detach()
	}
}
