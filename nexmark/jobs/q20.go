package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// q20: every bid joined with its auction, for auctions of category 10. The
// category filter runs before the auction side is stored; the bid side keeps
// every bid, since its auction may come later.
var q20 = Query{
	Name: "q20",
	Build: func(src []runtime.Stream) runtime.Stream {
		auctions := src[Auctions].Filter(func(a runtime.Row) bool {
			return a[AuctionCategory].Int() == nexmark.Q20CategoryFilter
		})
		sel := make([]runtime.JoinColumn, 0, len(BidSchema)+len(AuctionSchema)-2)
		for c := BidAuction; c <= BidExtra; c++ {
			sel = append(sel, runtime.JoinColumn{Col: c})
		}
		for c := AuctionItemName; c <= AuctionExtra; c++ {
			sel = append(sel, runtime.JoinColumn{Right: true, Col: c})
		}
		// [bid columns but the event id..., auction columns but the id...]
		return runtime.Join("join", src[Bids], auctions, runtime.JoinSpec{
			Left:   runtime.JoinInput{Key: []int{BidAuction}, Unique: []int{BidEventID}},
			Right:  runtime.JoinInput{Key: []int{AuctionID}, Unique: []int{AuctionID}},
			Select: sel,
		})
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q20Output, len(rows))
		for i, r := range rows {
			b := bidOf(r, 0)
			// The row lacks the auction id, which equals the bid's auction;
			// auctionOf reads from one column before the item name.
			a := auctionOf(r, BidExtra)
			a.ID = b.Auction
			out[i] = nexmark.Q20Row{Bid: b, Auction: a}
		}
		out.Sort()
		return out
	},
}
