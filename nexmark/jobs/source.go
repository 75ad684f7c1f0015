package jobs

import (
	"math"

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
	for k := range rd.wanted {
		use := runtime.Unread
		if k < len(uses) {
			use = uses[k]
		}
		rd.wanted[k] = use != runtime.Unread
		if use == runtime.Borrowed {
			rd.borrowed[k] = make(runtime.Row, len(s.Schemas()[k]))
		}
	}
	return rd, nil
}

// eventBatch is the events generated at a time.
const eventBatch = 256

// rowChunk is the datums of a chunk of source rows: 32,640 bytes, the
// largest size class holds it.
const rowChunk = 816

type reader struct {
	gen *nexmark.Generator
	// wanted says by event kind whether its rows are read: the generator
	// skips the others.
	wanted [3]bool
	// borrowed is, by event kind, the one row that every row of a Borrowed
	// output is built in; nil for the other outputs.
	borrowed [3]runtime.Row
	events   []nexmark.Event
	maxTime  int64
}

func (r *reader) Read(n int, emit func(int, runtime.Row)) (runtime.ReadStatus, error) {
	// Rows are carved from chunks small enough to be allocated as they
	// fill, in a size class rather than as one large block per batch: a
	// chunk is zeroed right before its rows are written, while it is in
	// cache, and a row kept downstream keeps only its chunk alive.
	var chunk []runtime.Datum
	take := func(kind nexmark.EventKind, w int) runtime.Row {
		if row := r.borrowed[kind]; row != nil {
			return row
		}
		if len(chunk) < w {
			chunk = make([]runtime.Datum, rowChunk)
		}
		row := chunk[:w:w]
		chunk = chunk[w:]
		return row
	}
	// Events are generated a few at a time, so that they are still in
	// cache when their rows are built.
	if r.events == nil {
		r.events = make([]nexmark.Event, eventBatch)
	}
	for n > 0 {
		got := r.gen.NextWanted(r.events[:min(n, eventBatch)], r.wanted)
		if got == 0 {
			break
		}
		n -= got
		for i := range r.events[:got] {
			e := &r.events[i]
			r.maxTime = max(r.maxTime, e.DateTime())
			if !r.wanted[e.Kind] {
				continue
			}
			switch e.Kind {
			case nexmark.KindPerson:
				emit(Persons, personRow(take(e.Kind, len(PersonSchema)), &e.Person))
			case nexmark.KindAuction:
				emit(Auctions, auctionRow(take(e.Kind, len(AuctionSchema)), &e.Auction))
			case nexmark.KindBid:
				emit(Bids, bidRow(take(e.Kind, len(BidSchema)), &e.Bid, e.ID))
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
