package nexmark

import "slices"

// Q20CategoryFilter is the auction category q20 keeps.
const Q20CategoryFilter = 10

// Q20 is every bid joined with its auction, for auctions of category 10.
//
// Semantics (nexmark-flink q20): a regular inner join of bids and auctions
// on bid.auction = auction.id with auction.category = 10 and no time
// condition. Every matching bid yields one row, whether it arrived before
// or after its auction; bids of other categories or of auctions that never
// appear yield none. Identical bids yield identical rows, each kept.
//
// Streaming shape: an updating join whose auction side is filtered before
// it is stored; the bid side keeps every bid, because its auction may
// arrive later.
func Q20(events []Event) Q20Output {
	auctions := auctionsByID(events)
	var out Q20Output
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		if a, ok := auctions[b.Auction]; ok && a.Category == Q20CategoryFilter {
			out = append(out, Q20Row{Bid: *b, Auction: *a})
		}
	}
	out.Sort()
	return out
}

// Q20Row is a bid and its auction. Its columns are the bid's (auction,
// bidder, price, channel, url, dateTime, extra) followed by the auction's
// without the id (itemName, description, initialBid, reserve, dateTime,
// expires, seller, category, extra).
type Q20Row struct {
	Bid     Bid
	Auction Auction
}

// Q20Output is q20's output, one row per matching bid.
type Q20Output []Q20Row

func (o Q20Output) Query() string { return "q20" }
func (o Q20Output) Len() int      { return len(o) }

func (o Q20Output) Sort() {
	slices.SortFunc(o, func(a, b Q20Row) int {
		if c := compareBids(&a.Bid, &b.Bid); c != 0 {
			return c
		}
		return compareAuctions(&a.Auction, &b.Auction)
	})
}

func (o Q20Output) AppendRow(dst []byte, i int) []byte {
	r := &o[i]
	dst = appendBid(dst, &r.Bid)
	return appendAuctionColumns(dst, &r.Auction)
}
