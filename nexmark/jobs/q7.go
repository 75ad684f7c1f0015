package jobs

import (
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// q7: the highest bids of every tumbling 10 s window. The window maximum of
// price is a tumbling-window aggregate, partitioned by the window (each
// bid carries its window's end, so one subtask owns a window); a regular
// join keyed by price then matches every bid whose price equals a window's
// maximum and whose time lies in [end − 10 s, end], both ends included, so
// it keeps every bid, as the SQL's regular join does.
var q7 = Query{
	Name: "q7",
	Build: func(src []runtime.Stream) runtime.Stream {
		// [price, dateTime, windowEnd]
		priced := src[Bids].Project(BidPrice, BidDateTime).Map(
			runtime.Schema{BidSchema[BidPrice], BidSchema[BidDateTime], {Name: "windowEnd", Type: table.BigInt()}},
			func(r runtime.Row) runtime.Row {
				t := r[1].Int()
				end := t - t%nexmark.Q7WindowSize + nexmark.Q7WindowSize
				return runtime.Row{r[0], r[1], subtask.Int(end)}
			})
		// [windowEnd, start, end, maxprice]
		maxima := runtime.WindowAggregate("maxima", priced,
			runtime.Tumble(1, nexmark.Q7WindowSize), []int{2}, runtime.Max("maxprice", 0))
		// [auction, price, bidder, dateTime, extra, eventID]
		bids := src[Bids].Project(BidAuction, BidPrice, BidBidder, BidDateTime, BidExtra, BidEventID)
		// [end, auction, price, bidder, dateTime, extra]
		return runtime.Join("highest", maxima, bids, runtime.JoinSpec{
			Left:  runtime.JoinInput{Key: []int{3}, Unique: []int{0}},
			Right: runtime.JoinInput{Key: []int{1}, Unique: []int{5}},
			Where: func(m, b runtime.Row) bool {
				end := m[2].Int()
				return end-nexmark.Q7WindowSize <= b[3].Int() && b[3].Int() <= end
			},
			Select: []runtime.JoinColumn{{Col: 2}, {Right: true, Col: 0}, {Right: true, Col: 1},
				{Right: true, Col: 2}, {Right: true, Col: 3}, {Right: true, Col: 4}},
		})
	},
	Output: func(rows []runtime.Row) nexmark.Output {
		out := make(nexmark.Q7Output, len(rows))
		for i, r := range rows {
			out[i] = nexmark.Q7Row{WindowEnd: r[0].Int(), Auction: r[1].Int(), Price: r[2].Int(),
				Bidder: r[3].Int(), DateTime: r[4].Int(), Extra: r[5].Str()}
		}
		out.Sort()
		return out
	},
}
