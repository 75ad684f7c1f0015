package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// KeyFilter answers "may this data file hold the key?" for the encoded keys
// of one immutable data file. It never says no for a key the file holds
// (rows deleted since included); it says yes for about one absent key in 200.
//
// It is a blocked Bloom filter cut into segments of keyFilterSegmentRows
// consecutive rows, each with its own blocks and its first key as a fence:
// a key is checked in the segment its order puts it in, so ascending keys
// walk the filter front to back, each segment's blocks staying in cache
// while its keys pass, instead of costing a cache miss each. Within a
// segment a key sets keyFilterProbes bits of one 256-bit block.
type KeyFilter struct {
	blocks []keyFilterBlock
	// Segment i's first key is fences[i] and its blocks are
	// blocks[starts[i]:starts[i+1]].
	fences [][]byte
	starts []int32
	// rows and size identify the file the filter was built from: a filter
	// is used only for a file with the same name, row count and size.
	rows, size int64
}

type keyFilterBlock [8]uint32

const (
	keyFilterBitsPerKey  = 12
	keyFilterProbes      = 8 // one bit in each word of a block
	keyFilterSegmentRows = 1024
)

// keyFilterSalts spread one 32-bit hash over the eight words of a block:
// odd multipliers, each giving a different bit.
var keyFilterSalts = [keyFilterProbes]uint32{
	0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f,
	0x165667b1, 0xd3a2646d, 0xfd7046c5, 0xb55a4f09,
}

// keyFilterBuilder gathers the keys of one file, in its (ascending) row
// order, as its rows pass. It checks the order of the fences only: rows out
// of order within a segment would break the file itself (its page index,
// its key range), not only its filter.
type keyFilterBuilder struct {
	hashes []uint64
	fences [][]byte
	arena  []byte // holds the fences
	err    error
}

func (k *keyFilterBuilder) add(key []byte) {
	if len(k.hashes)%keyFilterSegmentRows == 0 {
		if n := len(k.fences); k.err == nil && n > 0 && bytes.Compare(k.fences[n-1], key) >= 0 {
			k.err = fmt.Errorf("keys not ascending at row %d", len(k.hashes))
		}
		if cap(k.arena)-len(k.arena) < len(key) {
			k.arena = make([]byte, 0, max(4096, len(key)))
		}
		n := len(k.arena)
		k.arena = append(k.arena, key...)
		k.fences = append(k.fences, k.arena[n:len(k.arena):len(k.arena)])
	}
	k.hashes = append(k.hashes, keyHash(key))
}

// finish makes the filter of f, which must hold exactly the rows added, and
// starts over.
func (k *keyFilterBuilder) finish(f DataFileMeta) (*KeyFilter, error) {
	defer func() { *k = keyFilterBuilder{hashes: k.hashes[:0]} }()
	if k.err != nil {
		return nil, fmt.Errorf("key filter of %s: %w", f.FileName, k.err)
	}
	if int64(len(k.hashes)) != f.RowCount {
		return nil, fmt.Errorf("key filter of %s: %d keys for %d rows", f.FileName, len(k.hashes), f.RowCount)
	}
	flt := &KeyFilter{fences: k.fences, starts: make([]int32, 0, len(k.fences)+1), rows: f.RowCount, size: f.FileSize}
	total := 0
	for lo := 0; lo < len(k.hashes); lo += keyFilterSegmentRows {
		flt.starts = append(flt.starts, int32(total))
		total += segmentBlocks(min(keyFilterSegmentRows, len(k.hashes)-lo))
	}
	flt.starts = append(flt.starts, int32(total))
	flt.blocks = make([]keyFilterBlock, total)
	for i, h := range k.hashes {
		s := i / keyFilterSegmentRows
		setKeyBits(flt.blocks[flt.starts[s]:flt.starts[s+1]], h)
	}
	return flt, nil
}

func segmentBlocks(rows int) int { return max(1, (rows*keyFilterBitsPerKey+255)/256) }

func setKeyBits(blocks []keyFilterBlock, h uint64) {
	b := &blocks[((h>>32)*uint64(len(blocks)))>>32]
	for i, s := range keyFilterSalts {
		b[i] |= 1 << ((uint32(h) * s) >> 27)
	}
}

// hasKeyBits tests all eight bits without branching: about half the absent
// keys fail the first, and a branch per bit would be mispredicted as often.
func hasKeyBits(blocks []keyFilterBlock, h uint64) bool {
	b := &blocks[((h>>32)*uint64(len(blocks)))>>32]
	x := uint32(h)
	m := b[0] >> ((x * keyFilterSalts[0]) >> 27)
	m &= b[1] >> ((x * keyFilterSalts[1]) >> 27)
	m &= b[2] >> ((x * keyFilterSalts[2]) >> 27)
	m &= b[3] >> ((x * keyFilterSalts[3]) >> 27)
	m &= b[4] >> ((x * keyFilterSalts[4]) >> 27)
	m &= b[5] >> ((x * keyFilterSalts[5]) >> 27)
	m &= b[6] >> ((x * keyFilterSalts[6]) >> 27)
	m &= b[7] >> ((x * keyFilterSalts[7]) >> 27)
	return m&1 != 0
}

// mayHold appends to out the index of each of keys (encoded, ascending;
// hashes[i] is keyHash(keys[i])) that the filter's file may hold. A key
// below the file's least key is checked in the first segment: it passes
// only as any absent key may. The keys of a segment are found by galloping
// to the next fence, so a dense batch costs a few comparisons a segment,
// not one a key, and a sparse one skips the segments between its keys.
func (f *KeyFilter) mayHold(keys [][]byte, hashes []uint64, out []int32) []int32 {
	if len(f.fences) == 0 {
		return out // a file without rows
	}
	s := 0
	for i := 0; i < len(keys); {
		// The segment of keys[i]: the last whose fence is at most the key.
		s += gallop(len(f.fences)-s-1, func(j int) bool { return bytes.Compare(f.fences[s+1+j], keys[i]) <= 0 })
		end := len(keys)
		if s+1 < len(f.fences) {
			next := f.fences[s+1]
			end = i + 1 + gallop(len(keys)-i-1, func(j int) bool { return bytes.Compare(keys[i+1+j], next) < 0 })
		}
		seg := f.blocks[f.starts[s]:f.starts[s+1]]
		for j, h := range hashes[i:end] {
			if hasKeyBits(seg, h) {
				out = append(out, int32(i+j))
			}
		}
		i = end
	}
	return out
}

// gallop returns how many of the first n indexes satisfy in, which holds
// for a prefix of them: an exponential search, then a binary one, so it
// costs about 2*log2 of the answer.
func gallop(n int, in func(j int) bool) int {
	lo, step := 0, 1 // in holds below lo
	for lo < n && in(lo) {
		lo += step
		step *= 2
	}
	// in(lo - step/2) held (or lo is 0), in(lo) fails or lo >= n.
	hi := min(lo, n)
	lo = max(0, lo-step/2+1)
	if step == 1 {
		lo = 0
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if in(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// describes reports whether the filter was built from the file f names.
func (f *KeyFilter) describes(meta DataFileMeta) bool {
	return f.rows == meta.RowCount && f.size == meta.FileSize
}

// Bytes is the filter's memory.
func (f *KeyFilter) Bytes() int {
	n := len(f.blocks)*32 + len(f.starts)*4
	for _, k := range f.fences {
		n += len(k) + 24
	}
	return n
}

// keyHash is a 64-bit hash of an encoded key: sixteen bytes a step, each
// step one 64x64->128-bit multiply folded to 64 bits, the last step over the
// key's last sixteen bytes (overlapping the one before), as wyhash does.
// Keys of state tables are 8-30 bytes: two or three multiplies in all, a
// third of the time of mixing eight bytes at a time with a final avalanche.
// Filters live only in memory, so it need not be stable across versions.
func keyHash(key []byte) uint64 {
	const p0, p1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	n := len(key)
	seed := uint64(n) ^ p0
	var a, b uint64
	switch {
	case n > 16:
		for rest := key; len(rest) > 16; rest = rest[16:] {
			seed = hashMix(binary.LittleEndian.Uint64(rest)^p1, binary.LittleEndian.Uint64(rest[8:])^seed)
		}
		a, b = binary.LittleEndian.Uint64(key[n-16:]), binary.LittleEndian.Uint64(key[n-8:])
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(key)), uint64(binary.LittleEndian.Uint32(key[n-4:]))
	case n > 0:
		a = uint64(key[0])<<16 | uint64(key[n>>1])<<8 | uint64(key[n-1])
	}
	return hashMix(p1^uint64(n), hashMix(a^p1, b^seed))
}

// hashMix folds the 128-bit product of a and b to 64 bits.
func hashMix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}
