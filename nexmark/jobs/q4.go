package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// q4: the average closing price per category. An updating join of auctions
// and bids (bid time within the auction's lifetime), MAX(price) per auction,
// then COUNT, SUM and AVG of those maxima per category, fed by the
// retract/insert pairs the MAX emits when it rises.
var q4 = Query{
	Name: "q4",
	Build: func(src []runtime.Stream) runtime.Stream {
		// [id, category, dateTime, expires] and [auction, price, dateTime, eventID]
		auctions := src[Auctions].Project(AuctionID, AuctionCategory, AuctionDateTime, AuctionExpires)
		bids := src[Bids].Project(BidAuction, BidPrice, BidDateTime, BidEventID)
		joined := runtime.Join("join", auctions, bids, runtime.JoinSpec{
			Left:  runtime.JoinInput{Key: []int{0}, Unique: []int{0}},
			Right: runtime.JoinInput{Key: []int{0}, Unique: []int{3}},
			Where: func(a, b runtime.Row) bool {
				return a[2].Int() <= b[2].Int() && b[2].Int() <= a[3].Int()
			},
			Select: []runtime.JoinColumn{{Col: 0}, {Col: 1}, {Right: true, Col: 1}},
		})
		// [id, category, final]
		closing := runtime.Aggregate("closing", joined, []int{0, 1}, runtime.Max("final", 2))
		// [category, auctions, sum, avg]
		return runtime.Aggregate("average", closing, []int{1},
			runtime.Count("auctions"), runtime.Sum("sum", 2), runtime.Avg("avg", 2))
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q4Output, len(rows))
		for i, r := range rows {
			out[i] = nexmark.Q4Row{Category: r[0].Int(), Auctions: r[1].Int(), Sum: r[2].Int(), Avg: r[3].Int()}
		}
		out.Sort()
		return out
	},
}
