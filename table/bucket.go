package table

import (
	"encoding/binary"
	"math/bits"
)

// Paimon's BinaryRow.hashCode: a MurmurHash3 word hash over the row bytes
// (little-endian 4-byte words, seed 42) finalized with fmix(h ^ length).
const (
	murmurSeed = 42
	murmurC1   = 0xcc9e2d51
	murmurC2   = 0x1b873593
)

// HashBinaryRow hashes a row without its arity prefix (a multiple of 8 bytes)
// the way Java's BinaryRow.hashCode does.
func HashBinaryRow(row []byte) int32 {
	h := uint32(murmurSeed)
	for i := 0; i+4 <= len(row); i += 4 {
		k := binary.LittleEndian.Uint32(row[i:])
		k *= murmurC1
		k = bits.RotateLeft32(k, 15)
		k *= murmurC2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	h ^= uint32(len(row))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

// BucketOf maps a bucket-key row hash to a bucket: abs(hash % n) with Java's
// truncated remainder.
func BucketOf(hash int32, n int) int {
	b := hash % int32(n)
	if b < 0 {
		b = -b
	}
	return int(b)
}

// Bucket returns the bucket of a serialized bucket-key BinaryRow.
func Bucket(serializedRow []byte, n int) int {
	return BucketOf(HashBinaryRow(serializedRow[4:]), n)
}
