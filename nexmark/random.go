package nexmark

// splitRandom reproduces java.util.SplittableRandom created with a seed (its
// gamma is then the golden-ratio constant), so that nextInt(bound), nextLong
// and nextDouble draw from exactly the distributions the reference generator
// draws from. The reference keeps one unseeded instance per generator; here
// every event gets its own instance seeded from (Config.Seed, event id), which
// makes an event a pure function of its id and position and so makes any
// offset of any subtask replayable without replaying what came before.
type splitRandom struct {
	seed uint64
}

const goldenGamma = 0x9e3779b97f4a7c15

func newSplitRandom(seed uint64) splitRandom {
	return splitRandom{seed: seed}
}

// eventSeed derives an event's generator seed. seedMix is mix64 of the
// configured seed; multiplying the id by an odd constant before the final mix
// spreads neighbouring ids over the whole state space.
func eventSeed(seedMix uint64, eventID int64) uint64 {
	return mix64(seedMix ^ uint64(eventID)*goldenGamma)
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func mix32(z uint64) int32 {
	z = (z ^ (z >> 33)) * 0x62a9d9ed799705f5
	return int32(((z ^ (z >> 28)) * 0xcb24d0a5c88c35b3) >> 32)
}

func (r *splitRandom) nextSeed() uint64 {
	r.seed += goldenGamma
	return r.seed
}

// nextLong is SplittableRandom.nextLong().
func (r *splitRandom) nextLong() int64 {
	return int64(mix64(r.nextSeed()))
}

// nextInt is SplittableRandom.nextInt().
func (r *splitRandom) nextInt() int32 {
	return mix32(r.nextSeed())
}

// nextIntN is SplittableRandom.nextInt(bound): uniform on [0, bound), masking
// for powers of two and otherwise rejecting the over-represented tail exactly
// as Java does (the rejection test relies on int32 overflow).
func (r *splitRandom) nextIntN(bound int32) int32 {
	if bound <= 0 {
		panic("nexmark: nextIntN bound must be positive")
	}
	v := r.nextInt()
	m := bound - 1
	if bound&m == 0 {
		return v & m
	}
	u := int32(uint32(v) >> 1)
	for {
		v = u % bound
		if u+m-v >= 0 {
			return v
		}
		u = int32(uint32(r.nextInt()) >> 1)
	}
}

// intMod is the first try of nextIntN for a bound that is not a power of
// two: the draw u mod bound, and whether it passes the rejection test.
// Inlined into a loop with a constant bound, it divides by multiplying.
func (r *splitRandom) intMod(bound int32) (int32, bool) {
	u := int32(uint32(r.nextInt()) >> 1)
	v := u % bound
	return v, u+(bound-1)-v >= 0
}

// rejected draws until nextIntN's rejection test passes: nextIntN after a
// rejected first draw.
func (r *splitRandom) rejected(bound int32) int32 {
	for {
		if v, ok := r.intMod(bound); ok {
			return v
		}
	}
}

// nextDouble is SplittableRandom.nextDouble(): uniform on [0, 1) with 53 bits.
func (r *splitRandom) nextDouble() float64 {
	return float64(mix64(r.nextSeed())>>11) * (1.0 / (1 << 53))
}

// nextLongN is the reference's LongGenerator.nextLong(n): nextInt(n) when n
// fits an int, and otherwise |nextLong() % n|, which the reference itself
// flags as skewed but which it uses.
func (r *splitRandom) nextLongN(n int64) int64 {
	if n < 1<<31-1 {
		return int64(r.nextIntN(int32(n)))
	}
	v := r.nextLong() % n
	if v < 0 {
		v = -v
	}
	return v
}
