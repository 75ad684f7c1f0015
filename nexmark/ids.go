package nexmark

// Ids are a function of the event id alone: within every block of
// totalProportion consecutive event ids, the first PersonProportion ids
// create persons, the next AuctionProportion ids create auctions, and the
// rest are bids. Person and auction ids therefore count the creating events
// before them, and any event can name the newest person or auction without
// state, which is what lets subtasks generate disjoint id ranges in parallel.

// lastBase0PersonID is the newest person id (without FirstPersonID) at
// eventID: the id being created if eventID creates a person.
func (c *Config) lastBase0PersonID(eventID int64) int64 {
	total := c.totalProportion()
	epoch, off := eventID/total, eventID%total
	if off >= c.PersonProportion {
		off = c.PersonProportion - 1
	}
	return epoch*c.PersonProportion + off
}

// lastBase0AuctionID is the newest auction id (without FirstAuctionID) at
// eventID: the id being created if eventID creates an auction. Before the
// first auction it is -1.
func (c *Config) lastBase0AuctionID(eventID int64) int64 {
	total := c.totalProportion()
	epoch, off := eventID/total, eventID%total
	switch {
	case off < c.PersonProportion:
		epoch--
		off = c.AuctionProportion - 1
	case off >= c.PersonProportion+c.AuctionProportion:
		off = c.AuctionProportion - 1
	default:
		off -= c.PersonProportion
	}
	return epoch*c.AuctionProportion + off
}

// randomBase0PersonID picks uniformly among the NumActivePeople newest
// persons plus personIDLead ids not created yet.
func (c *Config) randomBase0PersonID(eventID int64, r *splitRandom) int64 {
	numPeople := c.lastBase0PersonID(eventID) + 1
	active := min(numPeople, c.NumActivePeople)
	return numPeople - active + r.nextLongN(active+personIDLead)
}

// randomBase0AuctionID picks uniformly among the auctions from
// NumInFlightAuctions before the newest one up to auctionIDLead ids past it.
func (c *Config) randomBase0AuctionID(eventID int64, r *splitRandom) int64 {
	last := c.lastBase0AuctionID(eventID)
	first := max(last-c.NumInFlightAuctions, 0)
	return first + r.nextLongN(last-first+1+auctionIDLead)
}
