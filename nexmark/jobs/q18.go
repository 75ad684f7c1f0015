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
		// The key is (auction, bidder), the bid's first two columns in
		// their order: a record's key is a slice of its row rather than a
		// copy, and within a key group the state's keys follow auction
		// ids, which grow with time, so a batch's keys gather in a few
		// narrow ranges next to the newest committed ones, which the
		// state's probes and merges pay less for than keys led by bidders
		// spread over all of it.
		return runtime.Deduplicate("last", src[Bids], runtime.DedupSpec{
			Key: []int{BidAuction, BidBidder},
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
