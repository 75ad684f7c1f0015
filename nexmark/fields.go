package nexmark

// Fields is a set of the fields of one event kind: bit i stands for field i
// of the kind's struct (Person, Auction or Bid) in declaration order, so
// Bid.Price is bit 2.
type Fields uint32

// AllFields holds every field of every kind.
const AllFields Fields = 1<<32 - 1

// Wanted is, by EventKind, the fields a reader of events uses. The
// generator skips the work of the others: the strings it would build and
// the random draws that come after the last wanted field of the event. A
// kind with no fields wanted is not read at all.
type Wanted [3]Fields

// AllWanted wants every field of every kind.
var AllWanted = Wanted{AllFields, AllFields, AllFields}

// Field bits of each kind, for the generator's own use. The draws of a
// bid and of a person come in the order of their fields, an auction's do
// not (see Generator.auction).
const (
	personID Fields = 1 << iota
	personName
	personEmail
	personCreditCard
	personCity
	personState
	personDateTime
	personExtra
	personFields = 1<<iota - 1
)

const (
	auctionID Fields = 1 << iota
	auctionItemName
	auctionDescription
	auctionInitialBid
	auctionReserve
	auctionDateTime
	auctionExpires
	auctionSeller
	auctionCategory
	auctionExtra
	auctionFields = 1<<iota - 1
)

const (
	bidAuction Fields = 1 << iota
	bidBidder
	bidPrice
	bidChannel
	bidURL
	bidDateTime
	bidExtra
	bidFields = 1<<iota - 1
)
