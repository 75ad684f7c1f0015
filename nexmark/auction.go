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
	return int64(math.Floor(pow10(r.nextDouble()*6)*100 + 0.5))
}

// ln10 is math.Log(10), the value math.Pow takes the logarithm of 10 to.
var ln10 = math.Log(10)

// pow10 is math.Pow(10, y) for y in [0, 6], bit for bit: the steps math.Pow
// takes for a base of 10 and such an exponent, without its special cases,
// its Frexp and Ldexp, and the logarithm of the base, which the price
// draws would otherwise pay on every bid.
func pow10(y float64) float64 {
	if y == 0 {
		return 1
	}
	if y == 1 {
		return 10
	}
	if y == 0.5 || y < 0 || y > 6 {
		return math.Pow(10, y)
	}
	yi := math.Floor(y)
	yf := y - yi
	a := 1.0
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a = math.Exp(yf * ln10)
	}
	// 10 = 0.625·2^4; math.Pow multiplies in the squarings of 0.625,
	// renormalized to [0.5, 1), one per bit of the integer part. They are
	// exact, and so is the power of two; the products round as there.
	x, xe, e := 0.625, 4, 0
	for i := int(yi); i != 0; i >>= 1 {
		if i&1 == 1 {
			a *= x
			e += xe
		}
		x *= x
		xe <<= 1
		if x < .5 {
			x += x
			xe--
		}
	}
	return a * float64(int64(1)<<e)
}
