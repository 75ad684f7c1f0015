package nexmark

import "fmt"

// auctionsByID indexes the auctions among events by id. q4, q9 and q20 join
// bids to auctions on id = auction and group by the auction id; that reads
// as "one auction per id", which the generator guarantees, so a repeated id
// is a broken input.
func auctionsByID(events []Event) map[int64]*Auction {
	byID := make(map[int64]*Auction)
	for i := range events {
		if events[i].Kind != KindAuction {
			continue
		}
		a := &events[i].Auction
		if _, dup := byID[a.ID]; dup {
			panic(fmt.Sprintf("nexmark: auction id %d occurs twice", a.ID))
		}
		byID[a.ID] = a
	}
	return byID
}

// bidWhileOpen is the join condition of q4 and q9: the bid's event time lies
// in the auction's [DateTime, Expires], closed at both ends as SQL BETWEEN
// is. The reference applies no reserve-price condition and does not wait
// for the auction to close: a bid at exactly Expires still counts.
func bidWhileOpen(a *Auction, b *Bid) bool {
	return a.DateTime <= b.DateTime && b.DateTime <= a.Expires
}
