package nexmark

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Hand-built events. Only the fields a query reads are set; strings are
// derived from the ids so that rows are easy to tell apart.

func auctionEvent(eventID, id, category, from, until int64) Event {
	return Event{ID: eventID, Kind: KindAuction, Auction: Auction{
		ID: id, ItemName: fmt.Sprintf("item%d", id), Category: category,
		DateTime: from, Expires: until, Seller: 1, Extra: "ax",
	}}
}

func bidEvent(eventID, auction, bidder, price, at int64) Event {
	return Event{ID: eventID, Kind: KindBid, Bid: Bid{
		Auction: auction, Bidder: bidder, Price: price, DateTime: at,
		Channel: "Google", URL: "u", Extra: fmt.Sprintf("e%d", eventID),
	}}
}

func personEvent(eventID, id int64) Event {
	return Event{ID: eventID, Kind: KindPerson, Person: Person{ID: id, Name: "p"}}
}

// checkOutput compares a reference output with the expected rows, and then
// checks that every permutation tried of the input gives the same output:
// the reference must not depend on arrival order.
func checkOutput(t *testing.T, events []Event, want Output, compute func([]Event) Output) {
	t.Helper()
	want.Sort()
	got := compute(events)
	if d := Diff(want, got); d != "" {
		t.Fatal(d)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(events)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if d := Diff(want, compute(shuffled)); d != "" {
			t.Fatalf("after shuffling the input: %s", d)
		}
	}
}

func TestQ4HandBuilt(t *testing.T) {
	events := []Event{
		bidEvent(1, 1, 7, 60, 120), // arrives before its auction; still joins
		auctionEvent(2, 1, 10, 100, 200),
		bidEvent(3, 1, 7, 10, 150),
		bidEvent(4, 1, 8, 30, 200), // at Expires: BETWEEN includes it
		bidEvent(5, 1, 8, 99, 201), // after Expires
		bidEvent(6, 1, 8, 98, 99),  // before DateTime
		auctionEvent(7, 2, 10, 100, 300),
		bidEvent(8, 2, 9, 51, 100),    // at DateTime
		auctionEvent(9, 3, 11, 0, 50), // no bids: category 11 has no row
		auctionEvent(10, 4, 12, 0, 50),
		bidEvent(11, 4, 9, 8, 10),
		bidEvent(12, 4, 9, 7, 20),
		auctionEvent(13, 5, 12, 0, 50),
		bidEvent(14, 5, 9, 3, 50),
		bidEvent(15, 99, 9, 1000, 50), // no such auction
		personEvent(16, 1000),
	}
	// Closing prices: auction 1 → 60, 2 → 51, 4 → 8, 5 → 3.
	want := Q4Output{
		{Category: 10, Auctions: 2, Sum: 111, Avg: 55}, // 55.5 truncated
		{Category: 12, Auctions: 2, Sum: 11, Avg: 5},
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q4(e) })
}

func TestQ9HandBuilt(t *testing.T) {
	a1 := auctionEvent(1, 1, 10, 100, 200)
	a2 := auctionEvent(2, 2, 11, 100, 200)
	a3 := auctionEvent(3, 3, 12, 100, 200)
	a4 := auctionEvent(4, 4, 12, 100, 200)
	events := []Event{
		a1, a2, a3, a4,
		// Auction 1: two bids at price 30; the earlier one wins.
		bidEvent(10, 1, 5, 30, 150),
		bidEvent(11, 1, 6, 30, 120),
		bidEvent(12, 1, 7, 20, 110),
		bidEvent(13, 1, 8, 500, 250), // after Expires
		// Auction 2: price and time tie; the smaller event id wins, even
		// though it arrives later and has the larger bidder.
		bidEvent(21, 2, 6, 50, 110),
		bidEvent(20, 2, 7, 50, 110),
		bidEvent(22, 2, 1, 49, 105),
		// Auction 3: only bids outside its lifetime.
		bidEvent(30, 3, 1, 70, 99),
		bidEvent(31, 3, 1, 70, 201),
		// Auction 4: the bid at exactly Expires counts, and wins.
		bidEvent(40, 4, 3, 8, 200),
		bidEvent(41, 4, 2, 7, 150),
	}
	want := Q9Output{
		{Auction: a1.Auction, Bidder: 6, Price: 30, BidDateTime: 120, BidExtra: "e11"},
		{Auction: a2.Auction, Bidder: 7, Price: 50, BidDateTime: 110, BidExtra: "e20"},
		{Auction: a4.Auction, Bidder: 3, Price: 8, BidDateTime: 200, BidExtra: "e40"},
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q9(e) })
}

func TestQ18HandBuilt(t *testing.T) {
	events := []Event{
		auctionEvent(1, 1, 10, 0, 1),
		// (bidder 1, auction 1): the latest time wins, not the last event.
		bidEvent(3, 1, 1, 1, 5),
		bidEvent(4, 1, 1, 2, 9),
		bidEvent(5, 1, 1, 3, 7),
		// (bidder 1, auction 2): equal times; the larger event id wins.
		bidEvent(8, 2, 1, 4, 5),
		bidEvent(6, 2, 1, 5, 5),
		// (bidder 2, auction 1): a single bid.
		bidEvent(9, 1, 2, 6, 1),
		personEvent(10, 1),
	}
	want := Q18Output{
		events[2].Bid, // price 2 at 9
		events[6].Bid, // bidder 2
		events[4].Bid, // price 4, event 8
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q18(e) })
}

func TestQ20HandBuilt(t *testing.T) {
	a1 := auctionEvent(1, 1, 10, 100, 200)
	a2 := auctionEvent(2, 2, 11, 100, 200)
	a3 := auctionEvent(4, 3, 10, 100, 200)
	b1 := bidEvent(5, 1, 2, 10, 900) // no time condition: long after Expires
	b2 := bidEvent(6, 1, 1, 20, 150)
	b3 := bidEvent(3, 3, 1, 30, 50) // before its auction, in arrival and time
	dup := b1
	dup.ID = 7 // an identical bid is a second row
	events := []Event{
		a1, a2, b3, a3, b1, b2, dup,
		bidEvent(8, 2, 1, 40, 150), // category 11
		bidEvent(9, 4, 1, 50, 150), // no such auction
	}
	want := Q20Output{
		{Bid: b2.Bid, Auction: a1.Auction},
		{Bid: b1.Bid, Auction: a1.Auction},
		{Bid: b1.Bid, Auction: a1.Auction},
		{Bid: b3.Bid, Auction: a3.Auction},
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q20(e) })
}

func TestQ5HandBuilt(t *testing.T) {
	const T = 1_000_000 // a multiple of the 2 s slide
	events := []Event{
		bidEvent(1, 1, 1, 1, T),
		bidEvent(2, 1, 1, 1, T+1000),
		bidEvent(3, 2, 1, 1, T+3000),
		bidEvent(4, 3, 1, 1, T+2100),
		auctionEvent(5, 1, 10, 0, 1), // not a bid: ignored
	}
	// Windows [s, s+10 s) with s ≡ 0 mod 2 s. The bids at T and T+1 s fall
	// in the windows starting T-8 s … T; the bids at T+2.1 s and T+3 s in
	// those starting T-6 s … T+2 s. Auction 1 leads every window up to T;
	// the window starting at T+2 s has auctions 2 and 3 tied at one bid.
	want := Q5Output{
		{T - 8000, T + 2000, 1, 2},
		{T - 6000, T + 4000, 1, 2},
		{T - 4000, T + 6000, 1, 2},
		{T - 2000, T + 8000, 1, 2},
		{T, T + 10000, 1, 2},
		{T + 2000, T + 12000, 2, 1},
		{T + 2000, T + 12000, 3, 1},
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q5(e) })
}

func TestQ7HandBuilt(t *testing.T) {
	const T = 1_000_000 // a multiple of the 10 s window
	events := []Event{
		bidEvent(1, 1, 11, 5, T+1000),
		bidEvent(2, 2, 12, 9, T+2000),
		bidEvent(3, 3, 13, 9, T+3000),
		// At the end of [T, T+10 s), so in [T+10 s, T+20 s), whose maximum
		// it is, and also BETWEEN the first window's end - 10 s and end.
		bidEvent(4, 4, 14, 9, T+10000),
		bidEvent(5, 5, 15, 3, T+15000),
		// Window [T+20 s, T+30 s): its own maximum, and at price 9 it also
		// matches no other window because its time is not a boundary.
		bidEvent(6, 6, 16, 9, T+20001),
	}
	row := func(end int64, e Event) Q7Row {
		b := e.Bid
		return Q7Row{WindowEnd: end, Auction: b.Auction, Price: b.Price, Bidder: b.Bidder, DateTime: b.DateTime, Extra: b.Extra}
	}
	want := Q7Output{
		row(T+10000, events[1]),
		row(T+10000, events[2]),
		row(T+10000, events[3]),
		row(T+20000, events[3]),
		row(T+30000, events[5]),
	}
	checkOutput(t, events, want, func(e []Event) Output { return Q7(e) })
}

func TestAuctionIDsMustBeUnique(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "auction id 1 occurs twice") {
			t.Fatalf("recovered %v", r)
		}
	}()
	Q4([]Event{auctionEvent(1, 1, 10, 0, 1), auctionEvent(2, 1, 10, 0, 1)})
}

func TestCanonicalText(t *testing.T) {
	out := Q4Output{{Category: 10, Auctions: 2, Sum: 111, Avg: 55}}
	var sb strings.Builder
	if err := WriteText(&sb, out); err != nil {
		t.Fatal(err)
	}
	if want := "nexmark q4 rows=1\nq4 10 2 111 55\n"; sb.String() != want {
		t.Fatalf("text %q, want %q", sb.String(), want)
	}
	q18 := Q18Output{{Auction: 1, Bidder: 2, Price: 3, Channel: "a b", URL: "u\"", DateTime: 4, Extra: "\n"}}
	if got, want := string(q18.AppendRow(nil, 0)), ` 1 2 3 "a b" "u\"" 4 "\n"`; got != want {
		t.Fatalf("row %s, want %s", got, want)
	}
	other := Q4Output{{Category: 10, Auctions: 2, Sum: 112, Avg: 56}}
	if Digest(out) == Digest(other) {
		t.Fatal("different outputs share a digest")
	}
	if d := Diff(out, other); !strings.Contains(d, "row 0") {
		t.Fatalf("Diff = %q", d)
	}
	if d := Diff(out, Q4Output{}); !strings.Contains(d, "0 rows, want 1") {
		t.Fatalf("Diff = %q", d)
	}
	if Digest(Q4Output{}) == Digest(Q9Output{}) {
		t.Fatal("empty outputs of two queries share a digest")
	}
}

func TestLookupQuery(t *testing.T) {
	for _, name := range []string{"q4", "q5", "q7", "q9", "q18", "q20"} {
		q, ok := LookupQuery(name)
		if !ok || q.Name != name {
			t.Fatalf("LookupQuery(%q) = %v, %v", name, q.Name, ok)
		}
		if got := q.Reference(nil).Query(); got != name {
			t.Fatalf("%s's reference returns %s output", name, got)
		}
	}
	if _, ok := LookupQuery("q3"); ok {
		t.Fatal("q3 found")
	}
}
