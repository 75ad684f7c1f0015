package nexmark

import "math"

// auction fills a for the auction-creating event eventID, which is event
// number eventNumber of its subtask, at event time ts. Random draws follow
// the reference's order: seller, category, initial bid, lifetime, item name,
// description, reserve, extra.
func (g *Generator) auction(a *Auction, eventID, eventNumber, ts int64, r *splitRandom) {
	c := &g.cfg
	var seller int64
	if r.nextIntN(int32(c.HotSellersRatio)) > 0 {
		// The hot seller is the first person of the newest block of 100.
		seller = c.lastBase0PersonID(eventID) / hotSellerBlock * hotSellerBlock
	} else {
		seller = c.randomBase0PersonID(eventID, r)
	}
	category := FirstCategoryID + int64(r.nextIntN(numCategories))
	initialBid := nextPrice(r)
	expires := ts + g.auctionLifetime(eventNumber, ts, r)

	b := appendSpacedString(g.scratch[:0], r, 20)
	itemName := string(b)
	b = appendSpacedString(b[:0], r, 100)
	description := string(b)
	g.scratch = b

	reserve := initialBid + nextPrice(r)
	size := 8 + len(itemName) + len(description) + 5*8
	*a = Auction{
		ID:          c.lastBase0AuctionID(eventID) + FirstAuctionID,
		ItemName:    itemName,
		Description: description,
		InitialBid:  initialBid,
		Reserve:     reserve,
		DateTime:    ts,
		Expires:     expires,
		Seller:      seller + FirstPersonID,
		Category:    category,
		Extra:       g.tables.nextExtra(r, size, c.AvgAuctionBytes),
	}
}

// auctionLifetime is uniform on [1, 2·horizon] ms, where horizon is the
// event time until NumInFlightAuctions more auctions have been created, so
// that about that many auctions are open at any time.
func (g *Generator) auctionLifetime(eventNumber, ts int64, r *splitRandom) int64 {
	c := &g.cfg
	eventsForAuctions := c.NumInFlightAuctions * c.totalProportion() / c.AuctionProportion
	horizon := g.timestamp(eventNumber+eventsForAuctions) - ts
	return 1 + r.nextLongN(max(2*horizon, 1))
}

// nextPrice is log-uniform on [100, 10^8], rounded half up like Java's
// Math.round.
func nextPrice(r *splitRandom) int64 {
	return int64(math.Floor(math.Pow(10, r.nextDouble()*6)*100 + 0.5))
}
