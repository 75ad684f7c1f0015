package nexmark

import "fmt"

// Person is a new user registering. Field names follow the reference DDL.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64 // event time, ms since the Unix epoch
	Extra        string
}

// Auction is a new item put up for auction.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64 // event time, ms since the Unix epoch
	Expires     int64 // ms since the Unix epoch; DateTime < Expires
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid on an auction.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64 // event time, ms since the Unix epoch
	Extra    string
}

// EventKind says which member of an Event holds the event. Its values are the
// reference DDL's event_type column.
type EventKind uint8

const (
	KindPerson  EventKind = 0
	KindAuction EventKind = 1
	KindBid     EventKind = 2
)

func (k EventKind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is the union of the three event kinds. Only the member named by Kind
// is meaningful; the generator zeroes the others. Members are held inline so
// that a batch is one allocation the generator refills.
type Event struct {
	// ID is the event's id, unique over all source subtasks of a run. It
	// decides the kind and the person/auction ids, and it is the
	// deterministic tie-breaker that q9 and q18 use where event time ties
	// (see their doc comments), so operators that implement those queries
	// carry it along with the row.
	ID      int64
	Kind    EventKind
	Person  Person
	Auction Auction
	Bid     Bid
}

// DateTime returns the event time of whichever member the event holds.
func (e *Event) DateTime() int64 {
	switch e.Kind {
	case KindPerson:
		return e.Person.DateTime
	case KindAuction:
		return e.Auction.DateTime
	default:
		return e.Bid.DateTime
	}
}
