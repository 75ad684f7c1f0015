package nexmark

import "math"

// auction fills a for the auction-creating event eventID, which is event
// number eventNumber of its subtask, at event time ts, with the fields in
// want (see Generator.NextWanted). Random draws follow the reference's
// order: seller, category, initial bid, lifetime, item name, description,
// reserve, extra; the draws after the last wanted field are skipped.
func (g *Generator) auction(a *Auction, eventID, eventNumber, ts int64, r *splitRandom, want Fields) {
	c := &g.cfg
	*a = Auction{DateTime: ts}
	if want&auctionID != 0 {
		a.ID = c.lastBase0AuctionID(eventID) + FirstAuctionID
	}
	if want&auctionDrawn == 0 {
		return
	}
	var seller int64
	if r.nextIntN(int32(c.HotSellersRatio)) > 0 {
		// The hot seller is the first person of the newest block of 100.
		seller = c.lastBase0PersonID(eventID) / hotSellerBlock * hotSellerBlock
	} else {
		seller = c.randomBase0PersonID(eventID, r)
	}
	if want&auctionSeller != 0 {
		a.Seller = seller + FirstPersonID
	}
	if want&auctionAfterSeller == 0 {
		return
	}
	category := FirstCategoryID + int64(r.nextIntN(numCategories))
	if want&auctionCategory != 0 {
		a.Category = category
	}
	if want&auctionAfterCategory == 0 {
		return
	}
	initialBid := nextPrice(r)
	if want&auctionInitialBid != 0 {
		a.InitialBid = initialBid
	}
	if want&auctionAfterInitialBid == 0 {
		return
	}
	expires := ts + g.auctionLifetime(eventNumber, ts, r)
	if want&auctionExpires != 0 {
		a.Expires = expires
	}
	if want&auctionAfterExpires == 0 {
		return
	}
	// The strings are drawn whenever a later field is wanted, but become
	// strings only when wanted themselves.
	b := appendSpacedString(g.scratch[:0], r, 20)
	size := 8 + len(b) + 5*8
	if want&auctionItemName != 0 {
		a.ItemName = string(b)
	}
	if want&auctionAfterItemName != 0 {
		b = appendSpacedString(b[:0], r, 100)
		size += len(b)
		if want&auctionDescription != 0 {
			a.Description = string(b)
		}
	}
	g.scratch = b
	if want&auctionAfterDescription == 0 {
		return
	}
	reserve := initialBid + nextPrice(r)
	if want&auctionReserve != 0 {
		a.Reserve = reserve
	}
	if want&auctionExtra != 0 {
		a.Extra = g.tables.nextExtra(r, size, c.AvgAuctionBytes)
	}
}

// The fields wanted from a stage of an auction's draws on: a stage is
// skipped when none of them is.
const (
	auctionAfterDescription = auctionReserve | auctionExtra
	auctionAfterItemName    = auctionDescription | auctionAfterDescription
	auctionAfterExpires     = auctionItemName | auctionAfterItemName
	auctionAfterInitialBid  = auctionExpires | auctionAfterExpires
	auctionAfterCategory    = auctionInitialBid | auctionAfterInitialBid
	auctionAfterSeller      = auctionCategory | auctionAfterCategory
	auctionDrawn            = auctionSeller | auctionAfterSeller
)

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
