package table

import (
	"encoding/binary"

	"github.com/parquet-go/parquet-go/format"
)

// appendDataPageHeader appends the thrift compact encoding of a v1 data
// page's header, the bytes parquet-go's reflecting thrift encoder writes
// for the format.PageHeader the page writer used to build
// (TestDataPageHeaderMatchesThrift): required fields always, optional ones
// unless zero (the CRC, absent bounds), the statistics' null count always.
// A page's header was a tenth of the page writer's CPU through the
// reflecting encoder.
func appendDataPageHeader(b []byte, uncompressed, compressed, crc, numValues int32, enc format.Encoding, minB, maxB []byte, nulls int64) []byte {
	const (
		tI32    = 5
		tI64    = 6
		tBinary = 8
		tStruct = 12
	)
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(format.DataPage))
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(uncompressed))
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(compressed))
	last := byte(3)
	if crc != 0 {
		b = append(b, 1<<4|tI32)
		b = binary.AppendVarint(b, int64(crc))
		last = 4
	}
	b = append(b, (5-last)<<4|tStruct)
	// DataPageHeader
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(numValues))
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(enc))
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(format.RLE))
	b = append(b, 1<<4|tI32)
	b = binary.AppendVarint(b, int64(format.RLE))
	b = append(b, 1<<4|tStruct)
	// Statistics: Max 1, Min 2, NullCount 3, MaxValue 5, MinValue 6
	last = 0
	bin := func(id byte, v []byte) {
		if v == nil {
			return
		}
		b = append(b, (id-last)<<4|tBinary)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
		last = id
	}
	bin(1, maxB)
	bin(2, minB)
	b = append(b, (3-last)<<4|tI64)
	b = binary.AppendVarint(b, nulls)
	last = 3
	bin(5, maxB)
	bin(6, minB)
	return append(b, 0, 0, 0) // Statistics, DataPageHeader, PageHeader
}
