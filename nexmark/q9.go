package nexmark

import "slices"

// Q9 is the winning bid of every auction.
//
// Semantics (nexmark-flink q9): join bids to auctions exactly as Q4 does
// (bid.auction = auction.id, bid time in [DateTime, Expires] inclusive, no
// reserve condition), and per auction keep the top row of the order price
// descending, then bid time ascending. Auctions without a kept bid do not
// appear. The output row is the auction's columns followed by the winning
// bid's bidder, price, time and extra.
//
// The SQL's ROW_NUMBER leaves ties on (price, time) to arrival order, where
// an append-only top-N keeps the earliest row. Here the earliest is the bid
// with the smallest event id, which is arrival order within one source
// subtask and a fixed choice across subtasks, so the winner does not depend
// on how sources interleave. Operators must therefore rank by (price desc,
// time asc, event id asc) and carry the bid's event id in the joined row.
//
// Streaming shape: the same updating join as Q4, then a top-1 per auction.
// With retractions on its input the top-N keeps every candidate (or enough
// of them) per auction so that it can fall back when the winner is retracted.
func Q9(events []Event) Q9Output {
	auctions := auctionsByID(events)
	type winner struct {
		bid     *Bid
		eventID int64
	}
	winners := make(map[int64]winner)
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		a, ok := auctions[b.Auction]
		if !ok || !bidWhileOpen(a, b) {
			continue
		}
		w, seen := winners[a.ID]
		if !seen || Q9Beats(b, events[i].ID, w.bid, w.eventID) {
			winners[a.ID] = winner{bid: b, eventID: events[i].ID}
		}
	}
	out := make(Q9Output, 0, len(winners))
	for id, w := range winners {
		out = append(out, Q9Row{
			Auction:     *auctions[id],
			Bidder:      w.bid.Bidder,
			Price:       w.bid.Price,
			BidDateTime: w.bid.DateTime,
			BidExtra:    w.bid.Extra,
		})
	}
	out.Sort()
	return out
}

// Q9Beats reports whether bid b (event id bID) ranks above bid c (event id
// cID) in q9's order: higher price, then earlier time, then smaller event id.
func Q9Beats(b *Bid, bID int64, c *Bid, cID int64) bool {
	return cmpInts(c.Price, b.Price, b.DateTime, c.DateTime, bID, cID) < 0
}

// Q9Row is an auction with its winning bid. The query's output also repeats
// the bid's auction column, which always equals Auction.ID and is left out.
type Q9Row struct {
	Auction     Auction
	Bidder      int64
	Price       int64
	BidDateTime int64
	BidExtra    string
}

// Q9Output is q9's output, one row per auction with a kept bid.
type Q9Output []Q9Row

func (o Q9Output) Query() string { return "q9" }
func (o Q9Output) Len() int      { return len(o) }

func (o Q9Output) Sort() {
	slices.SortFunc(o, func(a, b Q9Row) int {
		if c := compareAuctions(&a.Auction, &b.Auction); c != 0 {
			return c
		}
		if c := cmpInts(a.Bidder, b.Bidder, a.Price, b.Price, a.BidDateTime, b.BidDateTime); c != 0 {
			return c
		}
		return cmpStrings(a.BidExtra, b.BidExtra)
	})
}

func (o Q9Output) AppendRow(dst []byte, i int) []byte {
	r := &o[i]
	dst = appendAuction(dst, &r.Auction)
	dst = appendInt(dst, r.Bidder)
	dst = appendInt(dst, r.Price)
	dst = appendInt(dst, r.BidDateTime)
	return appendString(dst, r.BidExtra)
}

func appendAuction(dst []byte, a *Auction) []byte {
	dst = appendInt(dst, a.ID)
	return appendAuctionColumns(dst, a)
}

// appendAuctionColumns appends every auction column but the id.
func appendAuctionColumns(dst []byte, a *Auction) []byte {
	dst = appendString(dst, a.ItemName)
	dst = appendString(dst, a.Description)
	dst = appendInt(dst, a.InitialBid)
	dst = appendInt(dst, a.Reserve)
	dst = appendInt(dst, a.DateTime)
	dst = appendInt(dst, a.Expires)
	dst = appendInt(dst, a.Seller)
	dst = appendInt(dst, a.Category)
	return appendString(dst, a.Extra)
}
