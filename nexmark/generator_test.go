package nexmark

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func boundedConfig(numEvents int64) Config {
	cfg := DefaultConfig()
	cfg.NumEvents = numEvents
	return cfg
}

// drain returns every remaining event of g, read in batches of batchSize.
func drain(t testing.TB, g *Generator, batchSize int) []Event {
	t.Helper()
	var out []Event
	batch := make([]Event, batchSize)
	for {
		n := g.Next(batch)
		if n == 0 {
			return out
		}
		out = append(out, batch[:n]...)
	}
}

func newGen(t testing.TB, cfg Config, subtask, parallelism int) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg, subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func generateAll(t testing.TB, cfg Config, parallelism int) []Event {
	t.Helper()
	events, err := AllEvents(cfg, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestFirstEventsFollowReferenceIDs(t *testing.T) {
	events := drain(t, newGen(t, boundedConfig(54), 0, 1), 10)
	if len(events) != 54 {
		t.Fatalf("got %d events, want 54", len(events))
	}
	// Event ids start at 2: 2 and 3 create auctions 1001 and 1002, 4..49
	// are bids on hot auction 1000 (or a random one), 50 creates person
	// 1001, 51..53 create auctions 1003..1005.
	for i, e := range events {
		id := int64(i + 2)
		if e.ID != id {
			t.Fatalf("event %d has id %d, want %d", i, e.ID, id)
		}
		want := KindBid
		switch {
		case id%50 == 0:
			want = KindPerson
		case id%50 < 4:
			want = KindAuction
		}
		if e.Kind != want {
			t.Fatalf("event %d is a %v, want %v", id, e.Kind, want)
		}
	}
	for id, auction := range map[int64]int64{2: 1001, 3: 1002, 51: 1003, 52: 1004, 53: 1005} {
		if got := events[id-2].Auction.ID; got != auction {
			t.Errorf("event %d creates auction %d, want %d", id, got, auction)
		}
	}
	if got := events[50-2].Person.ID; got != 1001 {
		t.Errorf("event 50 creates person %d, want 1001", got)
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	cfg := boundedConfig(5000)
	a := drain(t, newGen(t, cfg, 1, 3), 64)
	b := drain(t, newGen(t, cfg, 1, 3), 1)
	if !slices.Equal(a, b) {
		t.Fatal("two generators with one configuration emitted different events")
	}

	// Another seed changes the random fields but not ids, kinds or times.
	cfg.Seed = 7
	c := drain(t, newGen(t, cfg, 1, 3), 64)
	sameBids := 0
	for i := range a {
		if a[i].ID != c[i].ID || a[i].Kind != c[i].Kind || a[i].DateTime() != c[i].DateTime() {
			t.Fatalf("seed changed id, kind or time of event %d", a[i].ID)
		}
		if a[i].Kind == KindBid && a[i].Bid == c[i].Bid {
			sameBids++
		}
	}
	if sameBids > len(a)/100 {
		t.Fatalf("%d of %d bids identical under another seed", sameBids, len(a))
	}
}

func TestSetOffsetReplaysTheSameEvents(t *testing.T) {
	t.Parallel()
	cfg := boundedConfig(3000)
	for _, p := range []int{1, 4} {
		for sub := range p {
			full := drain(t, newGen(t, cfg, sub, p), 128)
			for _, k := range []int64{0, 1, 49, 50, 333, int64(len(full)) - 1, int64(len(full))} {
				g := newGen(t, cfg, sub, p)
				// Advance part of the way first: a restored subtask may
				// have read past its checkpoint before it failed.
				drain(t, g, 1000)
				if err := g.SetOffset(k); err != nil {
					t.Fatal(err)
				}
				rest := drain(t, g, 7)
				if !slices.Equal(rest, full[k:]) {
					t.Fatalf("p=%d subtask %d: events after offset %d differ on replay", p, sub, k)
				}
				if g.Offset() != int64(len(full)) {
					t.Fatalf("offset %d after draining, want %d", g.Offset(), len(full))
				}
			}
		}
	}
	g := newGen(t, cfg, 0, 1)
	if err := g.SetOffset(3001); err == nil {
		t.Fatal("SetOffset past the end succeeded")
	}
	if err := g.SetOffset(-1); err == nil {
		t.Fatal("SetOffset(-1) succeeded")
	}
}

// withoutTime clears the fields that depend on the subtask's timeline.
func withoutTime(e Event) Event {
	e.Person.DateTime = 0
	e.Auction.DateTime, e.Auction.Expires = 0, 0
	e.Bid.DateTime = 0
	return e
}

func TestSplitCoversTheSameEvents(t *testing.T) {
	const n = 10007 // not a multiple of any parallelism below
	cfg := boundedConfig(n)
	one := drain(t, newGen(t, cfg, 0, 1), 1000)
	for _, p := range []int{2, 3, 8} {
		var split []Event
		for i := range p {
			split = append(split, drain(t, newGen(t, cfg, i, p), 97)...)
		}
		if len(split) != n {
			t.Fatalf("p=%d: %d events, want %d", p, len(split), n)
		}
		slices.SortFunc(split, func(a, b Event) int { return int(a.ID - b.ID) })
		for i := range one {
			if split[i].ID != one[i].ID {
				t.Fatalf("p=%d: event %d has id %d, one source has %d", p, i, split[i].ID, one[i].ID)
			}
			// Apart from event time, an event is a function of its id.
			if withoutTime(split[i]) != withoutTime(one[i]) {
				t.Fatalf("p=%d: event %d differs from one source's beyond its time", p, one[i].ID)
			}
		}
	}
	// Subtask i of p starts at id 2 + i·⌊N/p⌋ and the last takes the rest.
	for i, want := range []struct{ first, len int64 }{{2, 3335}, {3337, 3335}, {6672, 3337}} {
		g := newGen(t, cfg, i, 3)
		e := drain(t, g, 1)
		if e[0].ID != want.first || g.Len() != want.len {
			t.Errorf("subtask %d of 3: first id %d, %d events; want %d, %d", i, e[0].ID, g.Len(), want.first, want.len)
		}
	}
}

func TestUnboundedSplitUsesReferenceIDRanges(t *testing.T) {
	// The reference spans Long.MAX_VALUE / (50 · 500) event ids when
	// unbounded and splits that span.
	const span = math.MaxInt64 / (50 * 500)
	for i := range 4 {
		g := newGen(t, DefaultConfig(), i, 4)
		batch := make([]Event, 1)
		g.Next(batch)
		if want := 2 + int64(i)*(span/4); batch[0].ID != want {
			t.Errorf("subtask %d: first id %d, want %d", i, batch[0].ID, want)
		}
	}
}

func TestTimestamps(t *testing.T) {
	cfg := boundedConfig(200_000)
	cfg.EventsPerSecond = 10_000_000
	// 8 subtasks at 10 M/s in all: 0.8 µs per event per subtask, truncated
	// to whole microseconds before the millisecond division.
	g := newGen(t, cfg, 5, 8)
	events := drain(t, g, 1000)
	for k, e := range events {
		n := int64(k + 1)
		if want := cfg.BaseTime + int64(float64(n)*0.8)/1000; e.DateTime() != want {
			t.Fatalf("event number %d at %d, want %d", n, e.DateTime(), want)
		}
	}
	last := events[len(events)-1].DateTime() - cfg.BaseTime
	if last != 20 { // 25,000 events · 0.8 µs
		t.Fatalf("last event at +%d ms, want +20", last)
	}

	// At the default 10,000/s on one subtask, event number n is at n/10 ms.
	events = drain(t, newGen(t, boundedConfig(100), 0, 1), 100)
	for k, e := range events {
		if want := cfg.BaseTime + int64(k+1)/10; e.DateTime() != want {
			t.Fatalf("event number %d at %d, want %d", k+1, e.DateTime(), want)
		}
	}
}

func TestFieldDistributions(t *testing.T) {
	t.Parallel()
	const n = 200_000
	cfg := boundedConfig(n)
	events := generateAll(t, cfg, 1)
	var persons, auctions, bids int
	var hotAuction, hotBidder, hotSeller, hotChannel int
	categories := map[int64]int{}
	var lastPerson, lastAuction int64 = 1000, 1000
	for _, e := range events {
		lastP := cfg.lastBase0PersonID(e.ID)
		lastA := cfg.lastBase0AuctionID(e.ID)
		switch e.Kind {
		case KindPerson:
			persons++
			if e.Person.ID != lastPerson+1 {
				t.Fatalf("person %d follows %d", e.Person.ID, lastPerson)
			}
			lastPerson = e.Person.ID
		case KindAuction:
			auctions++
			a := e.Auction
			if a.ID != lastAuction+1 {
				t.Fatalf("auction %d follows %d", a.ID, lastAuction)
			}
			lastAuction = a.ID
			categories[a.Category]++
			if a.Seller == lastP/100*100+FirstPersonID {
				hotSeller++
			}
			// The lifetime is at most twice the time of 1666 events
			// (166.6 ms at 10,000/s), give or take truncation.
			if a.Expires <= a.DateTime || a.Expires > a.DateTime+334 {
				t.Fatalf("auction %d lives %d ms", a.ID, a.Expires-a.DateTime)
			}
			if a.Reserve <= a.InitialBid {
				t.Fatalf("auction %d reserve %d not above initial bid %d", a.ID, a.Reserve, a.InitialBid)
			}
		case KindBid:
			bids++
			b := e.Bid
			if b.Auction == lastA/100*100+FirstAuctionID {
				hotAuction++
			}
			if b.Bidder == lastP/100*100+1+2*FirstPersonID {
				hotBidder++
			}
			if len(b.Channel) < 8 || b.Channel[:8] != "channel-" {
				hotChannel++
			}
			if b.Auction < max(lastA-100, 0)+FirstAuctionID || b.Auction > lastA+10+FirstAuctionID {
				t.Fatalf("bid %d on auction %d, newest is %d", e.ID, b.Auction, lastA+FirstAuctionID)
			}
			if len(b.Extra) < 54 || len(b.Extra) >= 82 {
				t.Fatalf("bid extra of %d bytes, want [54, 82)", len(b.Extra))
			}
		}
	}
	if persons != n/50 || auctions != 3*n/50 || bids != 46*n/50 {
		t.Fatalf("persons/auctions/bids = %d/%d/%d, want %d/%d/%d", persons, auctions, bids, n/50, 3*n/50, 46*n/50)
	}
	near := func(what string, got, of int, want float64) {
		t.Helper()
		frac := float64(got) / float64(of)
		sd := math.Sqrt(want * (1 - want) / float64(of))
		if math.Abs(frac-want) > 5*sd {
			t.Errorf("%s: %.4f, want %.4f ± %.4f", what, frac, want, 5*sd)
		}
	}
	// A hot pick happens with probability 1-1/ratio; a random pick lands on
	// the hot id too, with probability 1 over the size of its range (111
	// auctions; 1,010 persons once 1,000 are active).
	near("hot auction", hotAuction, bids, 0.5+0.5/111)
	near("hot bidder", hotBidder, bids, 0.75+0.25/1010)
	near("hot seller", hotSeller, auctions, 0.75+0.25/1010)
	near("hot channel", hotChannel, bids, 0.5)
	for c := int64(10); c < 15; c++ {
		near("category", categories[c], auctions, 0.2)
	}
	if len(categories) != 5 {
		t.Errorf("categories %v, want 10..14", categories)
	}
}

func TestAllEventsConcatenatesSplits(t *testing.T) {
	cfg := boundedConfig(1001)
	all := generateAll(t, cfg, 3)
	var want []Event
	for i := range 3 {
		want = append(want, drain(t, newGen(t, cfg, i, 3), 64)...)
	}
	if !slices.Equal(all, want) {
		t.Fatal("AllEvents differs from draining every split")
	}
	if _, err := AllEvents(DefaultConfig(), 1); err == nil {
		t.Fatal("AllEvents of an unbounded run succeeded")
	}
}

func TestNewGeneratorRejectsBadArguments(t *testing.T) {
	if _, err := NewGenerator(DefaultConfig(), 2, 2); err == nil {
		t.Error("subtask 2 of 2 accepted")
	}
	if _, err := NewGenerator(DefaultConfig(), 0, 0); err == nil {
		t.Error("parallelism 0 accepted")
	}
	for name, mutate := range map[string]func(*Config){
		"negative events":  func(c *Config) { c.NumEvents = -1 },
		"zero rate":        func(c *Config) { c.EventsPerSecond = 0 },
		"zero bids":        func(c *Config) { c.BidProportion = 0 },
		"zero hot ratio":   func(c *Config) { c.HotBiddersRatio = 0 },
		"no active people": func(c *Config) { c.NumActivePeople = 0 },
		"huge extra":       func(c *Config) { c.AvgAuctionBytes = 1 << 20 },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if _, err := NewGenerator(cfg, 0, 1); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// NextWanted gives the wanted fields of every event exactly as Next does,
// the other fields zero (but DateTime), whatever the batch held before.
func TestNextWantedGivesWantedFields(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumEvents = 5000
	all := newGen(t, cfg, 1, 2)
	if err := all.SetOffset(100); err != nil {
		t.Fatal(err)
	}
	want := make([]Event, 2000)
	all.Next(want)
	rnd := rand.New(rand.NewPCG(1, 2))
	masks := []Wanted{{}, {0, 0, AllFields}, {0, AllFields, AllFields}, {AllFields, 0, 0},
		// q4's columns.
		{0, auctionID | auctionCategory | auctionDateTime | auctionExpires, bidAuction | bidPrice | bidDateTime}}
	for range 200 {
		masks = append(masks, Wanted{Fields(rnd.Uint32()), Fields(rnd.Uint32()), Fields(rnd.Uint32())})
	}
	// Single fields, each kind's last field among them.
	for f := range 10 {
		masks = append(masks, Wanted{1 << f, 1 << f, 1 << f})
	}
	some := newGen(t, cfg, 1, 2)
	got := make([]Event, len(want))
	for _, wanted := range masks {
		// The batch holds other events at each position: every field
		// must be overwritten.
		some.SetOffset(1001)
		some.Next(got)
		some.SetOffset(100)
		if n := some.NextWanted(got, &wanted); n != len(got) {
			t.Fatalf("%d events, want %d", n, len(got))
		}
		for i := range want {
			w := maskEvent(want[i], wanted[want[i].Kind])
			if got[i] != w {
				t.Fatalf("wanted %#x, event %d: %+v, want %+v", wanted, i, got[i], w)
			}
		}
	}
}

// maskEvent zeroes the fields of e's member outside want but its DateTime,
// and the other members.
func maskEvent(e Event, want Fields) Event {
	out := Event{ID: e.ID, Kind: e.Kind}
	var from, to reflect.Value
	switch e.Kind {
	case KindPerson:
		from, to = reflect.ValueOf(&e.Person).Elem(), reflect.ValueOf(&out.Person).Elem()
	case KindAuction:
		from, to = reflect.ValueOf(&e.Auction).Elem(), reflect.ValueOf(&out.Auction).Elem()
	default:
		from, to = reflect.ValueOf(&e.Bid).Elem(), reflect.ValueOf(&out.Bid).Elem()
	}
	for f := range from.NumField() {
		if want&(1<<f) != 0 || from.Type().Field(f).Name == "DateTime" {
			to.Field(f).Set(from.Field(f))
		}
	}
	return out
}

// The digest pins every field of every event kind (persons included, which
// no query's golden digest covers) over two splits: a change to the
// generator that alters any event shows up here.
func TestGoldenEventStream(t *testing.T) {
	h := sha256.New()
	for _, e := range generateAll(t, boundedConfig(20_000), 2) {
		fmt.Fprintf(h, "%+v\n", e)
	}
	const want = "04e316e1748152ede78f63a333ac082c8736b740cc24544cdbda9c54d4c8d6df"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("event stream digest %s, want %s", got, want)
	}
}
