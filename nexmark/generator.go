package nexmark

import (
	"fmt"
	"slices"
)

// Generator produces the events of one source subtask. Subtask i of p owns a
// contiguous range of event ids, as the reference's GeneratorConfig.split
// assigns them: each subtask gets ⌊N/p⌋ ids (the last also the remainder),
// so the p subtasks together emit exactly the ids one source would. All
// subtasks run on parallel event-time timelines starting at BaseTime, each
// at EventsPerSecond/p.
//
// Every event is a pure function of the configuration, the subtask and its
// offset (the number of events the subtask emitted before it), so a restored
// source subtask that is set to its checkpointed offset emits exactly the
// events it would have emitted without the failure. Apart from its event
// time (and an auction's expiry, which is measured in event time), an event
// depends only on its id and the seed, not on which split emits it.
//
// Events come as fast as Next is called: like the reference run at maximum
// emit speed, the generator never throttles; the rate shapes event time only.
//
// The parallelism fixes the event stream (id ranges and timelines), so it is
// a property of the run, not of the job's current deployment: a job that
// rescales its sources keeps the same splits and lets a source task read
// several of them, each with its own Generator and offset.
//
// A Generator is not safe for concurrent use; give each split its own.
type Generator struct {
	cfg     Config
	tables  *stringTables
	seedMix uint64
	// delayUs is the event-time gap between a subtask's consecutive events.
	delayUs float64
	// firstEventID is the reference's firstEventId: the subtask's event at
	// offset k has id firstEventID+1+k, since event numbers start at 1.
	firstEventID int64
	numEvents    int64
	offset       int64
	scratch      []byte
}

// NewGenerator returns the generator of source subtask subtask of
// parallelism, positioned at offset zero.
func NewGenerator(cfg Config, subtask, parallelism int) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("nexmark: subtask %d of parallelism %d does not exist", subtask, parallelism)
	}
	total := cfg.maxEvents()
	per := total / int64(parallelism)
	numEvents := per
	if subtask == parallelism-1 {
		numEvents = total - per*int64(parallelism-1)
	}
	return &Generator{
		cfg:          cfg,
		tables:       sharedTables(),
		seedMix:      mix64(cfg.Seed),
		delayUs:      1e6 / float64(cfg.EventsPerSecond) * float64(parallelism),
		firstEventID: 1 + int64(subtask)*per,
		numEvents:    numEvents,
		scratch:      make([]byte, 0, 128),
	}, nil
}

// AllEvents returns every event of a bounded run with parallelism splits,
// split by split: the complete sequence the reference implementations take.
// An event occupies about 320 bytes plus its strings.
func AllEvents(cfg Config, parallelism int) ([]Event, error) {
	if cfg.NumEvents == 0 {
		return nil, fmt.Errorf("nexmark: an unbounded run has no complete event sequence")
	}
	var all []Event
	for i := range parallelism {
		g, err := NewGenerator(cfg, i, parallelism)
		if err != nil {
			return nil, err
		}
		n := len(all)
		all = slices.Grow(all, int(g.Len()))[:n+int(g.Len())]
		if got := g.Next(all[n:]); int64(got) != g.Len() {
			panic(fmt.Sprintf("nexmark: split %d emitted %d of %d events", i, got, g.Len()))
		}
	}
	return all, nil
}

// Len is the number of events the subtask emits in all.
func (g *Generator) Len() int64 { return g.numEvents }

// Offset is the number of events emitted so far: the position a checkpoint
// records and SetOffset restores.
func (g *Generator) Offset() int64 { return g.offset }

// SetOffset positions the generator so that the next event is the one at offset.
func (g *Generator) SetOffset(offset int64) error {
	if offset < 0 || offset > g.numEvents {
		return fmt.Errorf("nexmark: offset %d outside [0, %d]", offset, g.numEvents)
	}
	g.offset = offset
	return nil
}

// Next overwrites batch[0:n] with the next n events, n = min(len(batch),
// events left), and returns n; zero means the subtask is exhausted. Strings
// in the events are never modified afterwards, so rows may keep them.
func (g *Generator) Next(batch []Event) int {
	return g.NextWanted(batch, &AllWanted)
}

// NextWanted is Next for a reader that uses only the fields wanted[kind] of
// events of each kind: a field outside them holds its zero value, except
// DateTime, which every event holds, and the fields' strings and the random
// draws after the last wanted field are skipped. An event depends on its id
// alone, so skipping one changes no other.
func (g *Generator) NextWanted(batch []Event, wanted *Wanted) int {
	n := int(min(int64(len(batch)), g.numEvents-g.offset))
	for i := range n {
		g.fill(&batch[i], g.offset+int64(i), wanted)
	}
	g.offset += int64(n)
	return n
}

func (g *Generator) fill(e *Event, offset int64, wanted *Wanted) {
	eventNumber := 1 + offset
	id := g.firstEventID + eventNumber
	ts := g.timestamp(eventNumber)
	e.ID = id
	switch rem := id % g.cfg.totalProportion(); {
	case rem < g.cfg.PersonProportion:
		e.Kind = KindPerson
	case rem < g.cfg.PersonProportion+g.cfg.AuctionProportion:
		e.Kind = KindAuction
	default:
		e.Kind = KindBid
	}
	if e.Kind != KindPerson {
		e.Person = Person{}
	}
	if e.Kind != KindAuction {
		e.Auction = Auction{}
	}
	if e.Kind != KindBid {
		e.Bid = Bid{}
	}
	r := newSplitRandom(eventSeed(g.seedMix, id))
	switch want := wanted[e.Kind]; e.Kind {
	case KindPerson:
		g.person(&e.Person, id, ts, &r, want)
	case KindAuction:
		g.auction(&e.Auction, id, eventNumber, ts, &r, want)
	default:
		g.bid(&e.Bid, id, ts, &r, want)
	}
}

// timestamp is the event time of the subtask's event number eventNumber:
// the reference truncates the microsecond product to an integer before
// dividing down to milliseconds, and so does this.
func (g *Generator) timestamp(eventNumber int64) int64 {
	return g.cfg.BaseTime + int64(float64(eventNumber)*g.delayUs)/1000
}
