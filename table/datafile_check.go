package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The parquet decoder trusts the sizes in a file; a corrupt size would make
// it allocate gigabytes. These checks run before the decoder touches a
// column chunk or page, and bound what it can be asked to allocate.
const (
	maxPageBytes  = 256 << 20 // an uncompressed page
	maxPageHeader = 64 << 10
)

// checkChunks validates the column chunk metadata of every row group.
func checkChunks(md *format.FileMetaData, fileSize int64) error {
	for gi, rg := range md.RowGroups {
		// Run-length encoding makes rows nearly free, but not free: the
		// bound keeps a corrupt count from sizing gigabyte buffers.
		if rg.NumRows < 0 || rg.NumRows > 4096*fileSize || rg.NumRows > 1<<31 {
			return fmt.Errorf("row group %d: %d rows in a file of %d bytes", gi, rg.NumRows, fileSize)
		}
		for ci, c := range rg.Columns {
			m := c.MetaData
			switch m.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd:
			default:
				return fmt.Errorf("row group %d column %d: unsupported compression %s", gi, ci, m.Codec)
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize < 0 || start+m.TotalCompressedSize > fileSize ||
				m.DataPageOffset < start || m.DataPageOffset >= start+max(m.TotalCompressedSize, 1) {
				return fmt.Errorf("row group %d column %d: chunk [%d,+%d) outside the file of %d bytes", gi, ci, start, m.TotalCompressedSize, fileSize)
			}
			if m.NumValues < 0 || m.NumValues > rg.NumRows || m.TotalUncompressedSize < 0 {
				return fmt.Errorf("row group %d column %d: negative sizes", gi, ci)
			}
			for _, ix := range []struct {
				what string
				off  int64
				n    int32
			}{{"offset index", c.OffsetIndexOffset, c.OffsetIndexLength}, {"column index", c.ColumnIndexOffset, c.ColumnIndexLength}} {
				if ix.off != 0 && (ix.off < 4 || ix.n < 0 || ix.n > maxPageHeader*16 || ix.off+int64(ix.n) > fileSize) {
					return fmt.Errorf("row group %d column %d: %s [%d,+%d) outside the file of %d bytes", gi, ci, ix.what, ix.off, ix.n, fileSize)
				}
			}
		}
	}
	return nil
}

// chunkRange is the byte range of a column chunk.
func chunkRange(m *format.ColumnMetaData) (start, end int64) {
	start = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	return start, start + m.TotalCompressedSize
}

// checkPageAt reads the page header at off and checks that the page lies
// before end and decodes to a bounded size; it returns the offset after the
// page.
func checkPageAt(r io.ReaderAt, off, end, chunkValues int64) (int64, error) {
	if off < 0 || off >= end {
		return 0, fmt.Errorf("page offset %d outside its chunk (ends at %d)", off, end)
	}
	for n := int64(256); ; n *= 16 {
		n = min(n, end-off, maxPageHeader)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, off); err != nil && err != io.EOF {
			return 0, err
		}
		br := bytes.NewReader(buf)
		var h format.PageHeader
		err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(br)).Decode(&h)
		if err != nil {
			if n < min(end-off, maxPageHeader) {
				continue // the header may be longer than what was read
			}
			return 0, fmt.Errorf("page header at %d: %w", off, err)
		}
		hdr := n - int64(br.Len())
		switch {
		case h.CompressedPageSize < 0 || off+hdr+int64(h.CompressedPageSize) > end:
			return 0, fmt.Errorf("page at %d: %d compressed bytes overrun its chunk", off, h.CompressedPageSize)
		case h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPageBytes:
			return 0, fmt.Errorf("page at %d: uncompressed size %d", off, h.UncompressedPageSize)
		}
		// Run-length encoding lets a small data page claim many values, so
		// those are bounded by the chunk; dictionary values are plain.
		if v, ok := h.DataPageHeader.Get(); ok && int64(v.NumValues) > chunkValues {
			return 0, fmt.Errorf("page at %d: %d values in a chunk of %d", off, v.NumValues, chunkValues)
		}
		if v, ok := h.DataPageHeaderV2.Get(); ok && int64(v.NumValues) > chunkValues {
			return 0, fmt.Errorf("page at %d: %d values in a chunk of %d", off, v.NumValues, chunkValues)
		}
		if v, ok := h.DictionaryPageHeader.Get(); ok && int64(v.NumValues) > 8*int64(h.UncompressedPageSize)+64 {
			return 0, fmt.Errorf("dictionary page at %d: %d values in %d bytes", off, v.NumValues, h.UncompressedPageSize)
		}
		return off + hdr + int64(h.CompressedPageSize), nil
	}
}

// checkChunkPages walks every page header of a chunk and checks that the
// offset index points at page starts only.
func checkChunkPages(r io.ReaderAt, m *format.ColumnMetaData, spans []pageSpan) error {
	off, end := chunkRange(m)
	starts := map[int64]bool{}
	for off < end {
		next, err := checkPageAt(r, off, end, m.NumValues)
		if err != nil {
			return err
		}
		starts[off] = true
		off = next
	}
	for _, s := range spans {
		if !starts[s.off] {
			return fmt.Errorf("offset index points at %d, which is not a page", s.off)
		}
	}
	return nil
}

// checkFraming checks the magic bytes and that the footer length fits the
// file, before the decoder allocates a buffer of that length.
func checkFraming(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a parquet file", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil && err != io.EOF {
		return err
	}
	if string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return fmt.Errorf("missing PAR1 magic")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer of %d bytes in a file of %d", n, size)
	}
	return nil
}
