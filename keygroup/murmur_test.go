package keygroup

import (
	"math"
	"testing"
)

// Expected values come from Flink's MathUtils.murmurHash run on a JVM; the
// first two also equal the published MurmurHash3_x86_32 vectors for the
// 4-byte inputs 00000000 and ffffffff with seed 0.
func TestMurmurMatchesFlink(t *testing.T) {
	cases := []struct {
		code int32
		want int32
	}{
		{0, 593689054}, // 0x2362f9de
		{-1, 1982413648},
		{1, 68075478},
		{42, 1134849565},
		{123456789, 1088346449},
		{math.MinInt32, 1718298732},
		{math.MaxInt32, 1653689534},
		{99162322, 1715862179}, // Java "hello".hashCode()
		{7, 1343918321},
		// The one input whose raw hash is math.MinInt32: folded to 0, not negated.
		{-2089875627, 0},
	}
	for _, c := range cases {
		if got := Murmur(c.code); got != c.want {
			t.Errorf("Murmur(%d) = %d, want %d", c.code, got, c.want)
		}
	}
}

func TestForKeyHashMatchesFlink(t *testing.T) {
	cases := []struct {
		hash     int32
		maxP     int
		keyGroup int
	}{
		{0, 128, 94},
		{1, 128, 86},
		{-1, 128, 80},
		{42, 128, 29},
		{math.MinInt32, 128, 108},
		{99162322, 128, 35},
		{7, 128, 113},
		{0, 10, 4},
		{123456789, 10, 9},
		{-2089875627, 128, 0},
		{12345, 1, 0},
	}
	for _, c := range cases {
		if got := ForKeyHash(c.hash, c.maxP); got != c.keyGroup {
			t.Errorf("ForKeyHash(%d, %d) = %d, want %d", c.hash, c.maxP, got, c.keyGroup)
		}
	}
}

func TestForKeyHashStaysInRange(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 1000, UpperBoundMaxParallelism} {
		for h := int32(-5000); h < 5000; h += 3 {
			if kg := ForKeyHash(h*7919, maxP); kg < 0 || kg >= maxP {
				t.Fatalf("ForKeyHash(%d, %d) = %d out of range", h*7919, maxP, kg)
			}
		}
	}
}

func TestForKeyHashPanicsOnBadMaxParallelism(t *testing.T) {
	for _, maxP := range []int{0, -1, UpperBoundMaxParallelism + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ForKeyHash(_, %d) did not panic", maxP)
				}
			}()
			ForKeyHash(1, maxP)
		}()
	}
}
