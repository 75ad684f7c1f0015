package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// q5: the hottest auctions of every hopping window (10 s, sliding by 2 s).
// A hopping-window count of bids per auction fires once the watermark passes
// a window's end; the largest count per window is a group aggregate over
// those counts, joined back to them on the window where the count reaches
// it (num >= maxn, as the SQL says; only the maxima qualify). As counts of a
// window arrive the maximum rises, and the join retracts the rows it
// overtook.
var q5 = Query{
	Name: "q5",
	Build: func(src []runtime.Stream) runtime.Stream {
		// [auction, dateTime]
		bids := src[Bids].Project(BidAuction, BidDateTime)
		// [auction, start, end, num]
		counts := runtime.WindowAggregate("counts", bids,
			runtime.Hop(1, nexmark.Q5WindowSize, nexmark.Q5WindowSlide), []int{0}, runtime.Count("num"))
		// [start, maxn]
		maxima := runtime.Aggregate("maxima", counts, []int{1}, runtime.Max("maxn", 3))
		// [start, end, auction, num]
		return runtime.Join("hottest", counts, maxima, runtime.JoinSpec{
			Left:   runtime.JoinInput{Key: []int{1}, Unique: []int{0}},
			Right:  runtime.JoinInput{Key: []int{0}, Unique: []int{0}},
			Where:  func(c, m runtime.Row) bool { return c[3].Int() >= m[1].Int() },
			Select: []runtime.JoinColumn{{Col: 1}, {Col: 2}, {Col: 0}, {Col: 3}},
		})
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q5Output, len(rows))
		for i, r := range rows {
			out[i] = nexmark.Q5Row{WindowStart: r[0].Int(), WindowEnd: r[1].Int(), Auction: r[2].Int(), Num: r[3].Int()}
		}
		out.Sort()
		return out
	},
}
