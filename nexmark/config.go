package nexmark

import (
	"fmt"
	"math"
)

// Id bases of the reference generator. Ids start well above zero so that
// queries find matches even on small event counts.
const (
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
)

// Constants of the reference generator that are not configurable there.
const (
	numCategories      = 5  // categories are FirstCategoryID + [0, 5)
	personIDLead       = 10 // not-yet-created person ids a random pick may return
	auctionIDLead      = 10 // not-yet-created auction ids a random pick may return
	hotSellerBlock     = 100
	hotAuctionBlock    = 100
	hotBidderBlock     = 100
	hotChannelsRatio   = 2
	numChannels        = 10000
	minRandomStringLen = 3
)

// Config holds the generator's knobs. DefaultConfig returns the reference
// defaults; a benchmark suite changes NumEvents and EventsPerSecond.
type Config struct {
	// NumEvents is the total number of events over all source subtasks; zero
	// means unbounded.
	NumEvents int64
	// EventsPerSecond is the aggregate event rate over all source subtasks.
	// It only shapes event time: every subtask advances its timestamps by
	// Parallelism/EventsPerSecond seconds per event.
	EventsPerSecond int64
	// BaseTime is the event time, in milliseconds since the Unix epoch, of
	// event number zero. The reference uses the wall clock at source creation;
	// a fixed value keeps runs reproducible.
	BaseTime int64
	// Seed selects the random field values. Ids, kinds and timestamps do not
	// depend on it.
	Seed uint64

	// Event mix: of every PersonProportion+AuctionProportion+BidProportion
	// consecutive event ids, the first PersonProportion are persons, the next
	// AuctionProportion auctions and the rest bids.
	PersonProportion  int64
	AuctionProportion int64
	BidProportion     int64

	// A bid goes to the current hot auction with probability
	// 1 - 1/HotAuctionRatio; likewise for hot bidders and hot sellers.
	HotAuctionRatio int
	HotBiddersRatio int
	HotSellersRatio int

	// NumInFlightAuctions bounds how far back a random bid's auction lies and
	// sets the mean auction lifetime (the event time of that many auctions).
	NumInFlightAuctions int64
	// NumActivePeople bounds how far back a random bidder or seller lies.
	NumActivePeople int64

	// Average serialized sizes; the extra fields pad events toward them.
	AvgPersonBytes  int
	AvgAuctionBytes int
	AvgBidBytes     int
}

// DefaultBaseTime is 2024-01-01T00:00:00Z in milliseconds.
const DefaultBaseTime = 1704067200000

// DefaultConfig returns the reference generator's defaults: an unbounded
// stream at 10,000 events/s with the 1:3:46 person/auction/bid mix.
func DefaultConfig() Config {
	return Config{
		EventsPerSecond:     10000,
		BaseTime:            DefaultBaseTime,
		PersonProportion:    1,
		AuctionProportion:   3,
		BidProportion:       46,
		HotAuctionRatio:     2,
		HotBiddersRatio:     4,
		HotSellersRatio:     4,
		NumInFlightAuctions: 100,
		NumActivePeople:     1000,
		AvgPersonBytes:      200,
		AvgAuctionBytes:     500,
		AvgBidBytes:         100,
	}
}

// Validate reports the first knob outside the range the generator's
// arithmetic supports.
func (c Config) Validate() error {
	switch {
	case c.NumEvents < 0:
		return fmt.Errorf("nexmark: NumEvents %d is negative", c.NumEvents)
	case c.EventsPerSecond < 1:
		return fmt.Errorf("nexmark: EventsPerSecond %d must be positive", c.EventsPerSecond)
	case c.PersonProportion < 1 || c.AuctionProportion < 1 || c.BidProportion < 1:
		return fmt.Errorf("nexmark: proportions %d:%d:%d must all be positive",
			c.PersonProportion, c.AuctionProportion, c.BidProportion)
	case c.totalProportion() > math.MaxInt32:
		return fmt.Errorf("nexmark: proportions sum to %d, above 2^31-1", c.totalProportion())
	case c.HotAuctionRatio < 1 || c.HotBiddersRatio < 1 || c.HotSellersRatio < 1:
		return fmt.Errorf("nexmark: hot ratios %d/%d/%d must all be positive",
			c.HotAuctionRatio, c.HotBiddersRatio, c.HotSellersRatio)
	case c.NumInFlightAuctions < 1 || c.NumInFlightAuctions > math.MaxInt32/2:
		return fmt.Errorf("nexmark: NumInFlightAuctions %d out of [1, 2^30)", c.NumInFlightAuctions)
	case c.NumActivePeople < 1 || c.NumActivePeople > math.MaxInt32/2:
		return fmt.Errorf("nexmark: NumActivePeople %d out of [1, 2^30)", c.NumActivePeople)
	case c.AvgPersonBytes < 0 || c.AvgAuctionBytes < 0 || c.AvgBidBytes < 0:
		return fmt.Errorf("nexmark: average sizes %d/%d/%d must not be negative",
			c.AvgPersonBytes, c.AvgAuctionBytes, c.AvgBidBytes)
	case c.AvgPersonBytes > maxExtraLen || c.AvgAuctionBytes > maxExtraLen || c.AvgBidBytes > maxExtraLen:
		return fmt.Errorf("nexmark: average sizes %d/%d/%d exceed %d bytes",
			c.AvgPersonBytes, c.AvgAuctionBytes, c.AvgBidBytes, maxExtraLen)
	}
	return nil
}

func (c Config) totalProportion() int64 {
	return c.PersonProportion + c.AuctionProportion + c.BidProportion
}

// maxEvents is the number of event ids the configuration spans. For an
// unbounded stream the reference scales Long.MAX_VALUE down by the largest
// event size, and split subtasks start at fractions of that span, so the
// same value is kept here to give subtasks the reference's id ranges.
func (c Config) maxEvents() int64 {
	if c.NumEvents > 0 {
		return c.NumEvents
	}
	largest := max(c.AvgPersonBytes, c.AvgAuctionBytes, c.AvgBidBytes, 1)
	return math.MaxInt64 / (c.totalProportion() * int64(largest))
}
