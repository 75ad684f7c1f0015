package nexmark

import "slices"

// Q5 is the hottest auctions of every sliding window.
//
// Semantics (nexmark-flink q5): assign every bid to the hopping windows of
// 10 s sliding by 2 s that contain its time (five windows [s, s+10 s) with
// s a multiple of 2 s); count bids per (window, auction); per window, output
// every auction whose count equals the window's largest count, ties all
// kept. The SQL joins the per-auction counts to the per-window maximum with
// num >= maxn, which only the maxima satisfy.
//
// The query's sink keeps only (auction, num); the rows here also carry the
// window, the key both sides of that join share, so that rows compare per
// window. Windows fire once the watermark passes their end; the source's
// watermark trails event time by 4 s and every source subtask emits
// nondecreasing times, so no bid is late and the final output is the
// batch result below.
//
// Streaming shape: a hopping-window count per (auction, window) and a
// window-level max, joined on the window; both are insert-only once windows
// fire, or an updating count with retractions if windows emit early.
func Q5(events []Event) Q5Output {
	type key struct{ start, auction int64 }
	counts := make(map[key]int64)
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		for s := windowStart(b.DateTime, Q5WindowSlide); s > b.DateTime-Q5WindowSize; s -= Q5WindowSlide {
			counts[key{s, b.Auction}]++
		}
	}
	maxCount := make(map[int64]int64)
	for k, n := range counts {
		maxCount[k.start] = max(maxCount[k.start], n)
	}
	var out Q5Output
	for k, n := range counts {
		if n == maxCount[k.start] {
			out = append(out, Q5Row{WindowStart: k.start, WindowEnd: k.start + Q5WindowSize, Auction: k.auction, Num: n})
		}
	}
	out.Sort()
	return out
}

// Q5Row is an auction with the most bids in a window, and that number.
type Q5Row struct {
	WindowStart int64
	WindowEnd   int64
	Auction     int64
	Num         int64
}

// Q5Output is q5's output: per window, every auction with the top count.
type Q5Output []Q5Row

func (o Q5Output) Query() string { return "q5" }
func (o Q5Output) Len() int      { return len(o) }

func (o Q5Output) Sort() {
	slices.SortFunc(o, func(a, b Q5Row) int {
		return cmpInts(a.WindowStart, b.WindowStart, a.WindowEnd, b.WindowEnd, a.Auction, b.Auction, a.Num, b.Num)
	})
}

func (o Q5Output) AppendRow(dst []byte, i int) []byte {
	r := &o[i]
	dst = appendInt(dst, r.WindowStart)
	dst = appendInt(dst, r.WindowEnd)
	dst = appendInt(dst, r.Auction)
	return appendInt(dst, r.Num)
}
