package nexmark

// bid fills b for the bid event eventID at event time ts, with the fields
// in want (see Generator.NextWanted). Random draws follow the reference's
// order, which is the order of the fields: auction, bidder, price, channel
// (with the URL), extra; the draws after the last wanted field are skipped.
func (g *Generator) bid(b *Bid, eventID, ts int64, r *splitRandom, want Fields) {
	c := &g.cfg
	*b = Bid{DateTime: ts}
	rest := want & (bidFields &^ bidDateTime)
	if rest == 0 {
		return
	}
	var auction int64
	if r.nextIntN(int32(c.HotAuctionRatio)) > 0 {
		// The hot auction is the first of the newest block of 100 auctions.
		auction = c.lastBase0AuctionID(eventID) / hotAuctionBlock * hotAuctionBlock
	} else {
		auction = c.randomBase0AuctionID(eventID, r)
	}
	if want&bidAuction != 0 {
		b.Auction = auction + FirstAuctionID
	}
	if rest < bidBidder {
		return
	}
	var bidder int64
	if r.nextIntN(int32(c.HotBiddersRatio)) > 0 {
		// The second person of the block, so hot bidders are not hot sellers.
		bidder = c.lastBase0PersonID(eventID)/hotBidderBlock*hotBidderBlock + 1
	} else {
		bidder = c.randomBase0PersonID(eventID, r)
	}
	if want&bidBidder != 0 {
		// The reference adds FirstPersonID to the bidder twice, so bidder
		// ids are person ids plus 1000 and never equal a Person.ID. Kept:
		// it is the stream every published Nexmark figure was measured on.
		b.Bidder = bidder + 2*FirstPersonID
	}
	if rest < bidPrice {
		return
	}
	price := nextPrice(r)
	if want&bidPrice != 0 {
		b.Price = price
	}
	if rest < bidChannel {
		return
	}
	var channel, url string
	if r.nextIntN(hotChannelsRatio) > 0 {
		i := r.nextIntN(int32(len(hotChannels)))
		channel, url = hotChannels[i], g.tables.hotURLs[i]
	} else {
		i := r.nextIntN(numChannels)
		channel, url = g.tables.channels[i], g.tables.channelURLs[i]
	}
	if want&bidChannel != 0 {
		b.Channel = channel
	}
	if want&bidURL != 0 {
		b.URL = url
	}
	if rest < bidExtra {
		return
	}
	b.Extra = g.tables.nextExtra(r, 4*8, c.AvgBidBytes)
}
