package nexmark

import "slices"

// Q7 is the highest bids of every 10-second window.
//
// Semantics (nexmark-flink q7): compute the maximum bid price of every
// tumbling 10 s window that has bids, then join every bid to those maxima on
// price = maximum and bid time in [window end − 10 s, window end], both ends
// included. Because the range is closed, a bid at exactly a window's end
// (the first instant of the next window) also matches the earlier window
// when its price equals that window's maximum, so one bid can yield two
// rows.
//
// The SQL selects (auction, price, bidder, dateTime, extra) into a sink
// declared (auction, bidder, price, ...), so the sink's bidder column holds
// prices and its price column bidders; the rows here name the selected
// columns for what they are, and also carry the window end, the join's
// other key. The join is a regular join (window_end is not a time
// attribute), so the final output is the batch result below.
//
// Streaming shape: a tumbling-window max of price, and an updating join
// keyed by price that keeps every bid.
func Q7(events []Event) Q7Output {
	maxPrice := make(map[int64]int64) // window end → max price
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		end := windowStart(b.DateTime, Q7WindowSize) + Q7WindowSize
		if p, seen := maxPrice[end]; !seen || b.Price > p {
			maxPrice[end] = b.Price
		}
	}
	var out Q7Output
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		// The window ends within [t, t+10 s]: the end of the bid's own
		// window, and t itself when t is a window boundary.
		end := windowStart(b.DateTime, Q7WindowSize) + Q7WindowSize
		ends, n := [2]int64{end, b.DateTime}, 1
		if b.DateTime == end-Q7WindowSize {
			n = 2
		}
		for _, e := range ends[:n] {
			if p, ok := maxPrice[e]; ok && p == b.Price {
				out = append(out, Q7Row{WindowEnd: e, Auction: b.Auction, Price: b.Price,
					Bidder: b.Bidder, DateTime: b.DateTime, Extra: b.Extra})
			}
		}
	}
	out.Sort()
	return out
}

// Q7Row is a bid whose price is the maximum of the window ending at
// WindowEnd.
type Q7Row struct {
	WindowEnd int64
	Auction   int64
	Price     int64
	Bidder    int64
	DateTime  int64
	Extra     string
}

// Q7Output is q7's output, one row per (window, bid at its maximum).
type Q7Output []Q7Row

func (o Q7Output) Query() string { return "q7" }
func (o Q7Output) Len() int      { return len(o) }

func (o Q7Output) Sort() {
	slices.SortFunc(o, func(a, b Q7Row) int {
		if c := cmpInts(a.WindowEnd, b.WindowEnd, a.Auction, b.Auction, a.Price, b.Price,
			a.Bidder, b.Bidder, a.DateTime, b.DateTime); c != 0 {
			return c
		}
		return cmpStrings(a.Extra, b.Extra)
	})
}

func (o Q7Output) AppendRow(dst []byte, i int) []byte {
	r := &o[i]
	dst = appendInt(dst, r.WindowEnd)
	dst = appendInt(dst, r.Auction)
	dst = appendInt(dst, r.Price)
	dst = appendInt(dst, r.Bidder)
	dst = appendInt(dst, r.DateTime)
	return appendString(dst, r.Extra)
}
