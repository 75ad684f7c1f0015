package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// q9: the winning bid of every auction. The same join as q4 carrying every
// auction column and the bid's bidder, price, time, extra and event id, then
// a top-1 per auction by price descending, time ascending, event id
// ascending (nexmark.Q9Beats).
var q9 = Query{
	Name: "q9",
	Build: func(src []runtime.Stream) runtime.Stream {
		// [auction, bidder, price, dateTime, extra, eventID]
		bids := src[Bids].Project(BidAuction, BidBidder, BidPrice, BidDateTime, BidExtra, BidEventID)
		sel := make([]runtime.JoinColumn, 0, len(AuctionSchema)+5)
		for c := range AuctionSchema {
			sel = append(sel, runtime.JoinColumn{Col: c})
		}
		for c := 1; c <= 5; c++ {
			sel = append(sel, runtime.JoinColumn{Right: true, Col: c})
		}
		// [auction columns..., bidder, price, bidDateTime, bidExtra, eventID]
		joined := runtime.Join("join", src[Auctions], bids, runtime.JoinSpec{
			Left:  runtime.JoinInput{Key: []int{AuctionID}, Unique: []int{AuctionID}},
			Right: runtime.JoinInput{Key: []int{0}, Unique: []int{5}},
			Where: func(a, b runtime.Row) bool {
				return a[AuctionDateTime].Int() <= b[3].Int() && b[3].Int() <= a[AuctionExpires].Int()
			},
			Select: sel,
		})
		const price, at, id = q9Bid + 1, q9Bid + 2, q9Bid + 4
		return runtime.TopN("winner", joined, runtime.TopNSpec{
			Partition: []int{AuctionID},
			N:         1,
			Less: func(a, b runtime.Row) bool {
				if a[price].Int() != b[price].Int() {
					return a[price].Int() > b[price].Int()
				}
				if a[at].Int() != b[at].Int() {
					return a[at].Int() < b[at].Int()
				}
				return a[id].Int() < b[id].Int()
			},
		})
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q9Output, len(rows))
		for i, r := range rows {
			out[i] = nexmark.Q9Row{
				Auction:     auctionOf(r, 0),
				Bidder:      r[q9Bid].Int(),
				Price:       r[q9Bid+1].Int(),
				BidDateTime: r[q9Bid+2].Int(),
				BidExtra:    r[q9Bid+3].Str(),
			}
		}
		out.Sort()
		return out
	},
}

// q9Bid is the first bid column of q9's joined row.
const q9Bid = AuctionExtra + 1
