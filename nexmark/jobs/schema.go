package jobs

import (
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/table"
)

// Outputs of the source, one per event kind.
const (
	Persons  = 0
	Auctions = 1
	Bids     = 2
)

// Columns of an auction row.
const (
	AuctionID = iota
	AuctionItemName
	AuctionDescription
	AuctionInitialBid
	AuctionReserve
	AuctionDateTime
	AuctionExpires
	AuctionSeller
	AuctionCategory
	AuctionExtra
)

// Columns of a bid row. EventID is the bid's event id, the tie-breaker q9
// and q18 rank by.
const (
	BidAuction = iota
	BidBidder
	BidPrice
	BidChannel
	BidURL
	BidDateTime
	BidExtra
	BidEventID
)

// Columns of a person row.
const (
	PersonID = iota
	PersonName
	PersonEmail
	PersonCreditCard
	PersonCity
	PersonState
	PersonDateTime
	PersonExtra
)

func col(name string, t table.DataType) runtime.Column { return runtime.Column{Name: name, Type: t} }

var (
	bigint = table.BigInt().NotNull()
	str    = table.String().NotNull()
	millis = table.Timestamp(3).NotNull()
)

// PersonSchema, AuctionSchema and BidSchema are the source's output schemas.
var (
	PersonSchema = runtime.Schema{
		col("id", bigint), col("name", str), col("emailAddress", str), col("creditCard", str),
		col("city", str), col("state", str), col("dateTime", millis), col("extra", str),
	}
	AuctionSchema = runtime.Schema{
		col("id", bigint), col("itemName", str), col("description", str), col("initialBid", bigint),
		col("reserve", bigint), col("dateTime", millis), col("expires", millis), col("seller", bigint),
		col("category", bigint), col("extra", str),
	}
	BidSchema = runtime.Schema{
		col("auction", bigint), col("bidder", bigint), col("price", bigint), col("channel", str),
		col("url", str), col("dateTime", millis), col("extra", str), col("eventID", bigint),
	}
)
