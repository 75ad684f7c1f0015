//go:build cgo

package table

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// seqTableModes returns the compression modes of the literal-length,
// offset and match-length tables of the first block of zstd frame f, a
// single-segment frame whose block is compressed with raw literals (0:
// predefined, 1: RLE, 2: coded in the frame, 3: repeated); ok is false for
// any other frame.
func seqTableModes(f []byte) (ll, of, ml byte, ok bool) {
	if len(f) < 6 || binary.LittleEndian.Uint32(f) != zstdMagic || f[4]>>5&1 == 0 {
		return 0, 0, 0, false
	}
	at := 5 + [4]int{1, 2, 4, 8}[f[4]>>6]
	if len(f) < at+5 || f[at]>>1&3 != 2 { // block type: compressed
		return 0, 0, 0, false
	}
	at += 3
	if f[at]&3 != 0 { // literals: raw
		return 0, 0, 0, false
	}
	switch n := f[at] >> 2 & 3; n {
	case 0, 2:
		at += 1 + int(f[at]>>3)
	case 1:
		at += 2 + int(f[at]>>4) | int(f[at+1])<<4
	case 3:
		return 0, 0, 0, false
	}
	if len(f) < at+3 || f[at] == 0 {
		return 0, 0, 0, false
	}
	switch {
	case f[at] < 128:
		at++
	case f[at] < 255:
		at += 2
	default:
		at += 3
	}
	if len(f) <= at {
		return 0, 0, 0, false
	}
	m := f[at]
	return m >> 6, m >> 4 & 3, m >> 2 & 3, true
}

// A framed page's frames of 64 BIGINT or DOUBLE values code their literal
// and match lengths with zstd's predefined tables (or one repeated symbol),
// so that a probe decompressing one builds no tables for them.
func TestFramedValueFramesUsePredefinedTables(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ints, floats []byte
	k := int64(1 << 40)
	for range 1024 {
		k += 1 + r.Int64N(255) // ascending keys, or counts
		ints = binary.LittleEndian.AppendUint64(ints, uint64(k))
		floats = binary.LittleEndian.AppendUint64(floats, math.Float64bits(float64(k)/3))
	}
	for _, src := range [][]byte{ints, floats} {
		checkPredefinedTables(t, src)
	}
}

func checkPredefinedTables(t *testing.T, src []byte) {
	t.Helper()
	body, err := newFramedZstdCodec(512).Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := parseZstdFrames(body, len(src))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fr.comp) - 1; n != 16 {
		t.Fatalf("%d frames, want 16", n)
	}
	for i := range len(fr.comp) - 1 {
		ll, _, ml, ok := seqTableModes(body[fr.comp[i]:fr.comp[i+1]])
		if !ok || ll > 1 || ml > 1 {
			t.Fatalf("frame %d: literal lengths mode %d, match lengths mode %d (ok %v), want predefined or RLE (0 or 1)", i, ll, ml, ok)
		}
	}
}
