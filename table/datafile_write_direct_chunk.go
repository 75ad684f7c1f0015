package table

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A page writer's pages, column chunks, row groups, page indexes and
// footer.

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
