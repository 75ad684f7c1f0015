package nexmark

import (
	"math"
	"testing"
)

// The expected values were printed by java.util.SplittableRandom (OpenJDK 17)
// constructed with the same seeds.
func TestSplitRandomMatchesJava(t *testing.T) {
	r := newSplitRandom(42)
	if got := r.nextLong(); got != -4767286540954276203 {
		t.Errorf("nextLong = %d", got)
	}
	if got := r.nextInt(); got != 909395113 {
		t.Errorf("nextInt = %d", got)
	}
	if got := r.nextIntN(10); got != 1 {
		t.Errorf("nextInt(10) = %d", got)
	}
	if got := r.nextIntN(16); got != 8 {
		t.Errorf("nextInt(16) = %d", got)
	}
	if got := r.nextIntN(1000003); got != 982653 {
		t.Errorf("nextInt(1000003) = %d", got)
	}
	if got := r.nextDouble(); got != 0.8682280765465323 {
		t.Errorf("nextDouble = %v", got)
	}
	if got := r.nextIntN(13); got != 12 {
		t.Errorf("nextInt(13) = %d", got)
	}

	seedMinus7 := uint64(math.MaxUint64 - 6) // (long) -7
	r = newSplitRandom(seedMinus7)
	for i, want := range []int32{2, 0, 1, 2, 0, 1, 0, 0, 2, 0, 2, 0, 0, 2, 0, 2, 1, 1, 1, 1} {
		if got := r.nextIntN(3); got != want {
			t.Fatalf("seed -7 draw %d: nextInt(3) = %d, want %d", i, got, want)
		}
	}

	// A bound just above 2^30 rejects about half of all candidates, so this
	// exercises the rejection loop.
	r = newSplitRandom(3)
	for i, want := range []int32{502273517, 418494645, 858906240, 678483686, 834519768, 648775355, 781766554, 637431868, 438958452, 299356064} {
		if got := r.nextIntN(1<<30 + 1); got != want {
			t.Fatalf("seed 3 draw %d: nextInt(2^30+1) = %d, want %d", i, got, want)
		}
	}

	r = newSplitRandom(1 << 63)
	for i, want := range []int64{2362493915, 2624213486, 1432265024, 4599561977} {
		if got := r.nextLongN(5000000000); got != want {
			t.Fatalf("draw %d: nextLongN(5e9) = %d, want %d", i, got, want)
		}
	}
}

func TestNextPriceMatchesJava(t *testing.T) {
	// Java: Math.round(Math.pow(10.0, r.nextDouble() * 6.0) * 100.0) with
	// new SplittableRandom(11).
	r := newSplitRandom(11)
	for i, want := range []int64{7897, 3751, 673370, 106582, 980, 204940, 401, 4785114} {
		if got := nextPrice(&r); got != want {
			t.Fatalf("draw %d: price %d, want %d", i, got, want)
		}
	}
	for range 10000 {
		if p := nextPrice(&r); p < 100 || p > 100_000_000 {
			t.Fatalf("price %d outside [100, 1e8]", p)
		}
	}
}

func TestPow10IsMathPow(t *testing.T) {
	// Every draw nextPrice can take: a double in [0, 1) with 53 random bits,
	// times 6. The edges, the integers and halves, then random draws.
	ys := []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6,
		math.Nextafter(6, 0), math.Nextafter(0, 1), math.Nextafter(1, 0), math.Nextafter(1, 2),
		math.Nextafter(0.5, 0), math.Nextafter(0.5, 1), math.Nextafter(5.5, 6), (1 - 1.0/(1<<53)) * 6}
	for k := range 6 {
		for _, d := range []float64{0.5, 1} {
			ys = append(ys, math.Nextafter(float64(k)+d, 0), math.Nextafter(float64(k)+d, 7))
		}
	}
	r := newSplitRandom(17)
	for range 2_000_000 {
		ys = append(ys, r.nextDouble()*6)
	}
	for _, y := range ys {
		if got, want := pow10(y), math.Pow(10, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("pow10(%v) = %v, math.Pow gives %v", y, got, want)
		}
	}
}

func TestNextIntNIsUniform(t *testing.T) {
	r := newSplitRandom(5)
	const bound, draws = 7, 70000
	var counts [bound]int
	for range draws {
		counts[r.nextIntN(bound)]++
	}
	for v, c := range counts {
		// 10,000 expected per value; 5 standard deviations is about ±460.
		if c < 9500 || c > 10500 {
			t.Errorf("value %d drawn %d times of %d", v, c, draws)
		}
	}
}

// intMod, and rejected after a rejected first try, draw what nextIntN
// draws. A bound just above 2^30 rejects about half of the first tries.
func TestIntModIsNextIntN(t *testing.T) {
	rejections := 0
	for _, bound := range []int32{13, 26, 10000, 1<<30 + 1} {
		a, b := newSplitRandom(9), newSplitRandom(9)
		for range 10000 {
			want := a.nextIntN(bound)
			got, ok := b.intMod(bound)
			if !ok {
				rejections++
				got = b.rejected(bound)
			}
			if got != want || a != b {
				t.Fatalf("bound %d: drew %d (seed %x), nextIntN %d (seed %x)", bound, got, b.seed, want, a.seed)
			}
		}
	}
	if rejections < 1000 {
		t.Fatalf("only %d rejected first tries", rejections)
	}
}
