package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
)

// A deletion-vector index file holds the deletion vectors of one bucket's
// data files: a version byte, then per data file
//
//	int32 BE size | int32 BE magic | portable 32-bit roaring bitmap | int32 BE CRC32
//
// where size counts magic and bitmap, and the CRC (IEEE) covers them too. The
// index manifest locates each vector by the offset of its size prefix and by
// size; the file itself does not name the data files.
const (
	dvIndexVersion = 1
	// dvMagic32 starts a 32-bit (RoaringBitmap) deletion vector, big-endian.
	dvMagic32 = 1581511376
	// dvMagic64 starts a 64-bit vector (deletion-vectors.bitmap64), written
	// little-endian. Only recognised to give a clear error.
	dvMagic64 = 1681511377
)

// EncodeDVIndex serializes the deletion vectors of one bucket, keyed by data
// file name, and returns the file bytes and the range of each vector in file
// name order. Empty bitmaps are left out.
func EncodeDVIndex(dvs map[string]*roaring.Bitmap) ([]byte, []DeletionVectorRange) {
	names := make([]string, 0, len(dvs))
	for name, bm := range dvs {
		if bm != nil && !bm.IsEmpty() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := []byte{dvIndexVersion}
	ranges := make([]DeletionVectorRange, 0, len(names))
	for _, name := range names {
		bm := dvs[name].Clone()
		bm.RunOptimize()
		payload := binary.BigEndian.AppendUint32(nil, dvMagic32)
		bitmap, err := bm.ToBytes()
		if err != nil {
			// Serializing into memory cannot fail.
			panic(fmt.Sprintf("dvindex: serialize bitmap of %s: %v", name, err))
		}
		payload = append(payload, bitmap...)
		card := int64(bm.GetCardinality())
		ranges = append(ranges, DeletionVectorRange{
			DataFile:    name,
			Offset:      int32(len(out)),
			Length:      int32(len(payload)),
			Cardinality: &card,
		})
		out = binary.BigEndian.AppendUint32(out, uint32(len(payload)))
		out = append(out, payload...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(payload))
	}
	return out, ranges
}

// DecodeDVIndex reads the deletion vectors that ranges locate in the index
// file data. It checks the version, each size against its range, the magic,
// the CRC, that the bitmap fills its payload exactly and the cardinality the
// range records. file names the source in errors.
func DecodeDVIndex(file string, data []byte, ranges []DeletionVectorRange) (map[string]*roaring.Bitmap, error) {
	if len(data) < 1 {
		return nil, fmt.Errorf("deletion-vector file %s: empty", file)
	}
	if data[0] != dvIndexVersion {
		return nil, fmt.Errorf("deletion-vector file %s: version %d, want %d", file, data[0], dvIndexVersion)
	}
	out := make(map[string]*roaring.Bitmap, len(ranges))
	for _, r := range ranges {
		if _, dup := out[r.DataFile]; dup {
			return nil, fmt.Errorf("deletion-vector file %s: two ranges for data file %s", file, r.DataFile)
		}
		bm, err := decodeDV(data, r)
		if err != nil {
			return nil, fmt.Errorf("deletion-vector file %s: vector of %s at offset %d: %w", file, r.DataFile, r.Offset, err)
		}
		out[r.DataFile] = bm
	}
	return out, nil
}

func decodeDV(data []byte, r DeletionVectorRange) (*roaring.Bitmap, error) {
	off, length := int64(r.Offset), int64(r.Length)
	if off < 1 || length < 4 || off+8+length > int64(len(data)) {
		return nil, fmt.Errorf("range [%d, +%d] outside the file of %d bytes", off, length, len(data))
	}
	size := int64(int32(binary.BigEndian.Uint32(data[off:])))
	if size != length {
		return nil, fmt.Errorf("size prefix %d differs from the recorded length %d", size, length)
	}
	payload := data[off+4 : off+4+size]
	crc := binary.BigEndian.Uint32(data[off+4+size:])
	switch magic := binary.BigEndian.Uint32(payload); {
	case magic == dvMagic32:
	case binary.LittleEndian.Uint32(payload) == dvMagic64:
		return nil, fmt.Errorf("64-bit deletion vectors (deletion-vectors.bitmap64) are not supported")
	default:
		return nil, fmt.Errorf("magic %d, want %d", int32(magic), dvMagic32)
	}
	if got := crc32.ChecksumIEEE(payload); got != crc {
		return nil, fmt.Errorf("CRC32 %08x, recorded %08x", got, crc)
	}
	bm := roaring.New()
	n, err := bm.ReadFrom(bytes.NewReader(payload[4:]))
	if err != nil {
		return nil, fmt.Errorf("roaring bitmap: %w", err)
	}
	if n != int64(len(payload)-4) {
		return nil, fmt.Errorf("roaring bitmap of %d bytes in a payload of %d", n, len(payload)-4)
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("roaring bitmap: %w", err)
	}
	if r.Cardinality != nil && *r.Cardinality != int64(bm.GetCardinality()) {
		return nil, fmt.Errorf("cardinality %d, recorded %d", bm.GetCardinality(), *r.Cardinality)
	}
	return bm, nil
}
