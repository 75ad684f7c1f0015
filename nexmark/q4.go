package nexmark

import "slices"

// Q4 is the average closing price per category.
//
// Semantics (nexmark-flink q4): join every bid to its auction (bid.auction =
// auction.id, a regular inner join, so a bid that arrives before its auction
// still joins) and keep the pairs whose bid time lies in the auction's
// [DateTime, Expires], both ends included. Per auction, the closing price is
// the maximum price among its kept bids; auctions without a kept bid do not
// appear. Per category, the output is AVG of the closing prices, which on
// BIGINT is an integer: Sum/Count truncated.
//
// There is no reserve-price condition and no requirement that the auction
// has expired by the end of the input: the query's SQL has neither.
//
// Streaming shape: an updating join of two append-only inputs, a MAX per
// auction that emits a retraction of the old maximum and the new maximum
// whenever it rises, and a SUM/COUNT per category fed by those
// retraction/insert pairs.
func Q4(events []Event) Q4Output {
	auctions := auctionsByID(events)
	closing := make(map[int64]int64) // auction id → max kept price
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		a, ok := auctions[b.Auction]
		if !ok || !bidWhileOpen(a, b) {
			continue
		}
		if p, seen := closing[a.ID]; !seen || b.Price > p {
			closing[a.ID] = b.Price
		}
	}
	perCategory := make(map[int64]*Q4Row)
	for id, price := range closing {
		c := auctions[id].Category
		row := perCategory[c]
		if row == nil {
			row = &Q4Row{Category: c}
			perCategory[c] = row
		}
		row.Auctions++
		row.Sum += price
	}
	out := make(Q4Output, 0, len(perCategory))
	for _, row := range perCategory {
		row.Avg = row.Sum / row.Auctions
		out = append(out, *row)
	}
	out.Sort()
	return out
}

// Q4Row is one category's result. Avg is the query's output column; Auctions
// and Sum are the COUNT and SUM the AVG aggregate keeps, listed so that a
// mismatch shows which of them is wrong.
type Q4Row struct {
	Category int64
	Auctions int64 // auctions in the category with at least one kept bid
	Sum      int64 // sum of their closing prices
	Avg      int64 // Sum / Auctions, truncated
}

// Q4Output is q4's output, one row per category.
type Q4Output []Q4Row

func (o Q4Output) Query() string { return "q4" }
func (o Q4Output) Len() int      { return len(o) }

func (o Q4Output) Sort() {
	slices.SortFunc(o, func(a, b Q4Row) int {
		return cmpInts(a.Category, b.Category, a.Auctions, b.Auctions, a.Sum, b.Sum, a.Avg, b.Avg)
	})
}

func (o Q4Output) AppendRow(dst []byte, i int) []byte {
	r := &o[i]
	dst = appendInt(dst, r.Category)
	dst = appendInt(dst, r.Auctions)
	dst = appendInt(dst, r.Sum)
	return appendInt(dst, r.Avg)
}
