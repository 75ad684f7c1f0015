package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// q18: the last bid of every (bidder, auction): a keep-last deduplication on
// bid time, ties going to the larger event id (nexmark.Q18Replaces).
var q18 = Query{
	Name: "q18",
	Build: func(src []runtime.Stream) runtime.Stream {
		return runtime.Deduplicate("last", src[Bids], runtime.DedupSpec{
			Key: []int{BidBidder, BidAuction},
			Replaces: func(b, kept runtime.Row) bool {
				if b[BidDateTime].Int() != kept[BidDateTime].Int() {
					return b[BidDateTime].Int() > kept[BidDateTime].Int()
				}
				return b[BidEventID].Int() > kept[BidEventID].Int()
			},
		})
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q18Output, len(rows))
		for i, r := range rows {
			out[i] = bidOf(r, 0)
		}
		out.Sort()
		return out
	},
}
