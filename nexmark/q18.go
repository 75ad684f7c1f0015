package nexmark

import "slices"

// Q18 is the last bid of every (bidder, auction) pair.
//
// Semantics (nexmark-flink q18): over bids alone, per (bidder, auction),
// keep the row ranked first by bid time descending; the output is that bid's
// columns. Flink plans this as a keep-last deduplication on event time, in
// which a bid with a time equal to the kept one replaces it, so among bids
// with the same time the last to arrive wins. Here the last is the bid with
// the largest event id, which is arrival order within one source subtask and
// a fixed choice across subtasks. Ties on time are common: the hot bidder
// bids on the hot auction many times within one millisecond at high rates.
//
// Streaming shape: deduplication keep-last per (bidder, auction) holding
// (time, event id) of the kept bid; a replacement emits a retraction of the
// old row and the new row.
func Q18(events []Event) Q18Output {
	type key struct{ bidder, auction int64 }
	type last struct {
		bid     *Bid
		eventID int64
	}
	lasts := make(map[key]last)
	for i := range events {
		if events[i].Kind != KindBid {
			continue
		}
		b := &events[i].Bid
		k := key{b.Bidder, b.Auction}
		l, seen := lasts[k]
		if !seen || Q18Replaces(b, events[i].ID, l.bid, l.eventID) {
			lasts[k] = last{bid: b, eventID: events[i].ID}
		}
	}
	out := make(Q18Output, 0, len(lasts))
	for _, l := range lasts {
		out = append(out, *l.bid)
	}
	out.Sort()
	return out
}

// Q18Replaces reports whether bid b (event id bID) replaces the kept bid c
// (event id cID) of its (bidder, auction): it is later, or equally late and
// of a larger event id.
func Q18Replaces(b *Bid, bID int64, c *Bid, cID int64) bool {
	return cmpInts(b.DateTime, c.DateTime, bID, cID) > 0
}

// Q18Output is q18's output: one bid per (bidder, auction), with the bid's
// columns auction, bidder, price, channel, url, dateTime, extra.
type Q18Output []Bid

func (o Q18Output) Query() string { return "q18" }
func (o Q18Output) Len() int      { return len(o) }

func (o Q18Output) Sort() {
	slices.SortFunc(o, func(a, b Bid) int { return compareBids(&a, &b) })
}

func (o Q18Output) AppendRow(dst []byte, i int) []byte {
	return appendBid(dst, &o[i])
}
