package jobs

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
)

// WatermarkDelay is how far the source's watermark trails event time, in
// milliseconds: the reference DDL's dateTime - INTERVAL '4' SECOND.
const WatermarkDelay = 4000

// Source is the Nexmark event stream as a runtime source. Its splits are the
// generator's subtasks: their number fixes the event stream, so it stays the
// same when the job runs or restores at another parallelism. Outputs are
// persons, auctions and bids (see Persons, Auctions, Bids).
type Source struct {
	Config nexmark.Config
	// NumSplits is the generator parallelism.
	NumSplits int
}

func (s *Source) Schemas() []runtime.Schema {
	return []runtime.Schema{PersonSchema, AuctionSchema, BidSchema}
}

func (s *Source) Splits() int { return s.NumSplits }

func (s *Source) Open(split int, offset int64, uses []runtime.OutputUse) (runtime.SplitReader, error) {
	g, err := nexmark.NewGenerator(s.Config, split, s.NumSplits)
	if err != nil {
		return nil, err
	}
	if err := g.SetOffset(offset); err != nil {
		return nil, err
	}
	rd := &reader{gen: g, maxTime: math.MinInt64}
	schemas := s.Schemas()
	for k := range rd.wanted {
		use := runtime.OutputUse{Rows: runtime.Unread}
		if k < len(uses) {
			use = uses[k]
		}
		if use.Rows == runtime.Unread {
			continue
		}
		rd.cols[k] = use.Columns
		width := len(use.Columns)
		if use.Columns == nil {
			width = len(schemas[k])
		}
		rd.width[k] = width
		for c := range schemas[k] {
			if use.Columns == nil || slices.Contains(use.Columns, c) {
				rd.wanted[k] |= fieldOf(nexmark.EventKind(k), c)
			}
		}
		if use.Rows == runtime.Borrowed {
			rd.borrowed[k] = make(runtime.Row, width)
		}
	}
	return rd, nil
}

// fieldOf is the generator field that column c of kind's rows holds: the
// columns of a kind follow the fields of its struct, and a bid's event id
// column is the event's id, which the generator always gives.
func fieldOf(kind nexmark.EventKind, c int) nexmark.Fields {
	if kind == nexmark.KindBid && c == BidEventID {
		return 0
	}
	return 1 << c
}

// eventBatch is the events generated at a time, into a buffer on the
// stack: they are written without the write barriers a heap buffer would
// take for their strings while the collector runs.
const eventBatch = 32

// rowChunk is the datums of a chunk of source rows: as many as the largest
// small size class, 32 KiB, holds, whatever the size of a datum.
const rowChunk = 32 << 10 / int(unsafe.Sizeof(runtime.Datum{}))

type reader struct {
	gen *nexmark.Generator
	// wanted is, by event kind, the generator fields its rows hold; zero
	// for a kind that is not read.
	wanted nexmark.Wanted
	// cols is, by event kind, the columns of its rows: the projection its
	// output's consumers start with, or nil for every column.
	cols [3][]int
	// width is, by event kind, the length of its rows.
	width [3]int
	// borrowed is, by event kind, the one row that every row of a Borrowed
	// output is built in; nil for the other outputs.
	borrowed [3]runtime.Row
	maxTime  int64
}

func (r *reader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	// Rows are carved from chunks small enough to be allocated as they
	// fill, in a size class rather than as one large block per batch: a
	// chunk is zeroed right before its rows are written, while it is in
	// cache, and a row kept downstream keeps only its chunk alive.
	var chunk []runtime.Datum
	take := func(kind nexmark.EventKind) runtime.Row {
		if row := r.borrowed[kind]; row != nil {
			return row
		}
		w := r.width[kind]
		if len(chunk) < w {
			chunk = make([]runtime.Datum, rowChunk)
		}
		row := chunk[:w:w]
		chunk = chunk[w:]
		return row
	}
	var events [eventBatch]nexmark.Event
	for n > 0 {
		got := r.gen.NextWanted(events[:min(n, eventBatch)], &r.wanted)
		if got == 0 {
			break
		}
		n -= got
		// Event time never decreases along a split.
		r.maxTime = max(r.maxTime, events[got-1].DateTime())
		for i := range events[:got] {
			e := &events[i]
			if r.wanted[e.Kind] == 0 {
				continue
			}
			row := take(e.Kind)
			switch cols := r.cols[e.Kind]; e.Kind {
			case nexmark.KindPerson:
				if cols == nil {
					personRow(row, &e.Person)
				} else {
					for j, c := range cols {
						row[j] = personColumn(&e.Person, c)
					}
				}
				emit(Persons, row)
			case nexmark.KindAuction:
				if cols == nil {
					auctionRow(row, &e.Auction)
				} else {
					for j, c := range cols {
						row[j] = auctionColumn(&e.Auction, c)
					}
				}
				emit(Auctions, row)
			case nexmark.KindBid:
				if cols == nil {
					bidRow(row, &e.Bid, e.ID)
				} else {
					for j, c := range cols {
						row[j] = bidColumn(&e.Bid, e.ID, c)
					}
				}
				emit(Bids, row)
			}
		}
	}
	if r.gen.Offset() == r.gen.Len() {
		return runtime.ReadDone, nil
	}
	return runtime.ReadMore, nil
}

func (r *reader) Offset() int64 { return r.gen.Offset() }

func (r *reader) Watermark() int64 {
	if r.maxTime == math.MinInt64 {
		return math.MinInt64
	}
	return r.maxTime - WatermarkDelay - 1
}

func personRow(row runtime.Row, p *nexmark.Person) runtime.Row {
	row[PersonID] = subtask.Int(p.ID)
	row[PersonName] = subtask.Str(p.Name)
	row[PersonEmail] = subtask.Str(p.EmailAddress)
	row[PersonCreditCard] = subtask.Str(p.CreditCard)
	row[PersonCity] = subtask.Str(p.City)
	row[PersonState] = subtask.Str(p.State)
	row[PersonDateTime] = subtask.Int(p.DateTime)
	row[PersonExtra] = subtask.Str(p.Extra)
	return row
}

func auctionRow(row runtime.Row, a *nexmark.Auction) runtime.Row {
	row[AuctionID] = subtask.Int(a.ID)
	row[AuctionItemName] = subtask.Str(a.ItemName)
	row[AuctionDescription] = subtask.Str(a.Description)
	row[AuctionInitialBid] = subtask.Int(a.InitialBid)
	row[AuctionReserve] = subtask.Int(a.Reserve)
	row[AuctionDateTime] = subtask.Int(a.DateTime)
	row[AuctionExpires] = subtask.Int(a.Expires)
	row[AuctionSeller] = subtask.Int(a.Seller)
	row[AuctionCategory] = subtask.Int(a.Category)
	row[AuctionExtra] = subtask.Str(a.Extra)
	return row
}

func bidRow(row runtime.Row, b *nexmark.Bid, eventID int64) runtime.Row {
	row[BidAuction] = subtask.Int(b.Auction)
	row[BidBidder] = subtask.Int(b.Bidder)
	row[BidPrice] = subtask.Int(b.Price)
	row[BidChannel] = subtask.Str(b.Channel)
	row[BidURL] = subtask.Str(b.URL)
	row[BidDateTime] = subtask.Int(b.DateTime)
	row[BidExtra] = subtask.Str(b.Extra)
	row[BidEventID] = subtask.Int(eventID)
	return row
}

func personColumn(p *nexmark.Person, c int) runtime.Datum {
	switch c {
	case PersonID:
		return subtask.Int(p.ID)
	case PersonName:
		return subtask.Str(p.Name)
	case PersonEmail:
		return subtask.Str(p.EmailAddress)
	case PersonCreditCard:
		return subtask.Str(p.CreditCard)
	case PersonCity:
		return subtask.Str(p.City)
	case PersonState:
		return subtask.Str(p.State)
	case PersonDateTime:
		return subtask.Int(p.DateTime)
	case PersonExtra:
		return subtask.Str(p.Extra)
	}
	panic(fmt.Sprintf("jobs: person column %d", c))
}

func auctionColumn(a *nexmark.Auction, c int) runtime.Datum {
	switch c {
	case AuctionID:
		return subtask.Int(a.ID)
	case AuctionItemName:
		return subtask.Str(a.ItemName)
	case AuctionDescription:
		return subtask.Str(a.Description)
	case AuctionInitialBid:
		return subtask.Int(a.InitialBid)
	case AuctionReserve:
		return subtask.Int(a.Reserve)
	case AuctionDateTime:
		return subtask.Int(a.DateTime)
	case AuctionExpires:
		return subtask.Int(a.Expires)
	case AuctionSeller:
		return subtask.Int(a.Seller)
	case AuctionCategory:
		return subtask.Int(a.Category)
	case AuctionExtra:
		return subtask.Str(a.Extra)
	}
	panic(fmt.Sprintf("jobs: auction column %d", c))
}

func bidColumn(b *nexmark.Bid, eventID int64, c int) runtime.Datum {
	switch c {
	case BidAuction:
		return subtask.Int(b.Auction)
	case BidBidder:
		return subtask.Int(b.Bidder)
	case BidPrice:
		return subtask.Int(b.Price)
	case BidChannel:
		return subtask.Str(b.Channel)
	case BidURL:
		return subtask.Str(b.URL)
	case BidDateTime:
		return subtask.Int(b.DateTime)
	case BidExtra:
		return subtask.Str(b.Extra)
	case BidEventID:
		return subtask.Int(eventID)
	}
	panic(fmt.Sprintf("jobs: bid column %d", c))
}

// auctionOf reads an auction back from its columns starting at at.
func auctionOf(r runtime.Row, at int) nexmark.Auction {
	return nexmark.Auction{
		ID:          r[at+AuctionID].Int(),
		ItemName:    r[at+AuctionItemName].Str(),
		Description: r[at+AuctionDescription].Str(),
		InitialBid:  r[at+AuctionInitialBid].Int(),
		Reserve:     r[at+AuctionReserve].Int(),
		DateTime:    r[at+AuctionDateTime].Int(),
		Expires:     r[at+AuctionExpires].Int(),
		Seller:      r[at+AuctionSeller].Int(),
		Category:    r[at+AuctionCategory].Int(),
		Extra:       r[at+AuctionExtra].Str(),
	}
}

// bidOf reads a bid back from its columns starting at at.
func bidOf(r runtime.Row, at int) nexmark.Bid {
	return nexmark.Bid{
		Auction:  r[at+BidAuction].Int(),
		Bidder:   r[at+BidBidder].Int(),
		Price:    r[at+BidPrice].Int(),
		Channel:  r[at+BidChannel].Str(),
		URL:      r[at+BidURL].Str(),
		DateTime: r[at+BidDateTime].Int(),
		Extra:    r[at+BidExtra].Str(),
	}
}
