package keygroup

import "math/bits"

// Murmur scrambles a 32-bit hash code the way Flink does before taking it
// modulo the maximum parallelism: one 4-byte MurmurHash3 (x86, 32-bit, seed 0)
// block followed by the finalization mix, then folded to a non-negative value
// (the absolute value, with math.MinInt32 mapping to 0).
func Murmur(code int32) int32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	k := uint32(code) * c1
	k = bits.RotateLeft32(k, 15)
	k *= c2

	h := bits.RotateLeft32(k, 13) // seed 0: h = 0 ^ k
	h = h*5 + 0xe6546b64

	h ^= 4 // input length in bytes
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16

	s := int32(h)
	switch {
	case s >= 0:
		return s
	case s == -1<<31:
		return 0
	default:
		return -s
	}
}
