package nexmark

// bid fills b for the bid event eventID at event time ts. Random draws follow
// the reference's order: auction, bidder, price, channel, extra.
func (g *Generator) bid(b *Bid, eventID, ts int64, r *splitRandom) {
	c := &g.cfg
	var auction int64
	if r.nextIntN(int32(c.HotAuctionRatio)) > 0 {
		// The hot auction is the first of the newest block of 100 auctions.
		auction = c.lastBase0AuctionID(eventID) / hotAuctionBlock * hotAuctionBlock
	} else {
		auction = c.randomBase0AuctionID(eventID, r)
	}
	var bidder int64
	if r.nextIntN(int32(c.HotBiddersRatio)) > 0 {
		// The second person of the block, so hot bidders are not hot sellers.
		bidder = c.lastBase0PersonID(eventID)/hotBidderBlock*hotBidderBlock + 1
	} else {
		bidder = c.randomBase0PersonID(eventID, r)
	}
	price := nextPrice(r)
	var channel, url string
	if r.nextIntN(hotChannelsRatio) > 0 {
		i := r.nextIntN(int32(len(hotChannels)))
		channel, url = hotChannels[i], g.tables.hotURLs[i]
	} else {
		i := r.nextIntN(numChannels)
		channel, url = g.tables.channels[i], g.tables.channelURLs[i]
	}
	*b = Bid{
		Auction: auction + FirstAuctionID,
		// The reference adds FirstPersonID to the bidder twice, so bidder
		// ids are person ids plus 1000 and never equal a Person.ID. Kept:
		// it is the stream every published Nexmark figure was measured on.
		Bidder:   bidder + 2*FirstPersonID,
		Price:    price,
		Channel:  channel,
		URL:      url,
		DateTime: ts,
		Extra:    g.tables.nextExtra(r, 4*8, c.AvgBidBytes),
	}
}
