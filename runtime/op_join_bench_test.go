package runtime

import (
	goruntime "runtime"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkJoinNexmark drives a join operator with nexmark events as q4
// (projected auctions and bids, a Where on the bid's time) and q20 (whole
// bid rows on the left, auctions of one category on the right) do, on the
// paimon and pebble backends. An op is one event. Batches are 1,024 events,
// a checkpoint interval 100 batches; the flush (Freeze, Commit, Release on
// paimon; Flush on pebble) and the making of the input rows run outside the
// timed path, so ns/op (and thread-cpu-ns/op, the CPU of the benchmark's
// thread alone) is the operator's and its state's cost per event.
func BenchmarkJoinNexmark(b *testing.B) {
	for _, q := range []string{"q4", "q20"} {
		for _, backend := range []string{"paimon", "pebble"} {
			b.Run(q+"/"+backend, func(b *testing.B) { benchJoinNexmark(b, q, backend) })
		}
	}
}

// joinBenchQuery is a join of auctions and bids and how to build their rows.
type joinBenchQuery struct {
	auctions, bids Schema
	spec           JoinSpec
	bidsLeft       bool
	auction        func(*nexmark.Auction) Row // nil: filtered out
	bid            func(*nexmark.Bid, int64) Row
}

func joinBenchQueryOf(name string) joinBenchQuery {
	i64, str := Column{Type: table.BigInt()}, Column{Type: table.String()}
	switch name {
	case "q4":
		return joinBenchQuery{
			auctions: Schema{i64, i64, i64, i64},
			bids:     Schema{i64, i64, i64, i64},
			spec: JoinSpec{
				Left:   JoinInput{Key: []int{0}, Unique: []int{0}},
				Right:  JoinInput{Key: []int{0}, Unique: []int{3}},
				Where:  func(a, b Row) bool { return a[2].Int() <= b[2].Int() && b[2].Int() <= a[3].Int() },
				Select: []JoinColumn{{Col: 0}, {Col: 1}, {Right: true, Col: 1}},
			},
			auction: func(a *nexmark.Auction) Row {
				return Row{subtask.Int(a.ID), subtask.Int(a.Category), subtask.Int(a.DateTime), subtask.Int(a.Expires)}
			},
			bid: func(b *nexmark.Bid, id int64) Row {
				return Row{subtask.Int(b.Auction), subtask.Int(b.Price), subtask.Int(b.DateTime), subtask.Int(id)}
			},
		}
	case "q20":
		var sel []JoinColumn
		for c := 0; c < 7; c++ {
			sel = append(sel, JoinColumn{Col: c})
		}
		for c := 1; c < 10; c++ {
			sel = append(sel, JoinColumn{Right: true, Col: c})
		}
		return joinBenchQuery{
			auctions: Schema{i64, str, str, i64, i64, i64, i64, i64, i64, str},
			bids:     Schema{i64, i64, i64, str, str, i64, str, i64},
			spec: JoinSpec{
				Left:   JoinInput{Key: []int{0}, Unique: []int{7}},
				Right:  JoinInput{Key: []int{0}, Unique: []int{0}},
				Select: sel,
			},
			bidsLeft: true,
			auction: func(a *nexmark.Auction) Row {
				if a.Category != nexmark.Q20CategoryFilter {
					return nil
				}
				return Row{subtask.Int(a.ID), subtask.Str(a.ItemName), subtask.Str(a.Description), subtask.Int(a.InitialBid),
					subtask.Int(a.Reserve), subtask.Int(a.DateTime), subtask.Int(a.Expires), subtask.Int(a.Seller),
					subtask.Int(a.Category), subtask.Str(a.Extra)}
			},
			bid: func(b *nexmark.Bid, id int64) Row {
				return Row{subtask.Int(b.Auction), subtask.Int(b.Bidder), subtask.Int(b.Price), subtask.Str(b.Channel),
					subtask.Str(b.URL), subtask.Int(b.DateTime), subtask.Str(b.Extra), subtask.Int(id)}
			},
		}
	}
	panic(name)
}

// countingEmitter counts the rows emitted and reads a column of each.
type countingEmitter struct {
	n   int
	sum int64
}

func (e *countingEmitter) Emit(_ Change, r Row) { e.n++; e.sum += r[0].Int() }

func benchJoinNexmark(b *testing.B, query, backend string) {
	const batch, interval, maxPar = 1024, 100, 128
	q := joinBenchQueryOf(query)
	left, right := q.auctions, q.bids
	if q.bidsLeft {
		left, right = right, left
	}
	var sides [2]*joinSide
	for s, in := range []struct {
		schema Schema
		input  JoinInput
	}{{left, q.spec.Left}, {right, q.spec.Right}} {
		side, err := newJoinSide(s, in.schema, in.input)
		if err != nil {
			b.Fatal(err)
		}
		sides[s] = side
	}
	op := &joinOp{spec: &joinSpec{name: "join", sides: sides, where: q.spec.Where, width: len(q.spec.Select), spans: joinSpans(q.spec.Select)}}

	be := openBenchBackend(b, backend)
	store := subtask.NewStore(be)
	ctx := &OperatorContext{Store: store, KeyGroups: keygroup.Range{Start: 0, End: maxPar - 1}, MaxParallelism: maxPar}
	if err := op.Open(ctx); err != nil {
		b.Fatal(err)
	}

	cfg := nexmark.DefaultConfig()
	gen, err := nexmark.NewGenerator(cfg, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	events := make([]nexmark.Event, batch)
	auctionKey, bidKey := sides[1].key, sides[0].key
	if !q.bidsLeft {
		auctionKey, bidKey = sides[0].key, sides[1].key
	}
	auctionInput, bidInput := 0, 1
	if q.bidsLeft {
		auctionInput, bidInput = 1, 0
	}
	var auctions, bids []Record
	var out countingEmitter
	var frozen *subtask.FrozenFlush
	var cpu int64
	id := int64(0)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	b.ResetTimer()
	for done, batches := 0, 0; done < b.N; batches++ {
		b.StopTimer()
		if batches%interval == 1 && frozen != nil {
			if err := store.Release(frozen, true, nil); err != nil {
				b.Fatal(err)
			}
			frozen = nil
		}
		n := gen.Next(events[:min(batch, b.N-done)])
		auctions, bids = auctions[:0], bids[:0]
		for i := range events[:n] {
			e := &events[i]
			switch e.Kind {
			case nexmark.KindAuction:
				if r := q.auction(&e.Auction); r != nil {
					kg := keygroup.ForKeyHash(auctionKey.hash(r), maxPar)
					auctions = append(auctions, Record{Kind: Insert, KeyGroup: int32(kg), Row: r})
				}
			case nexmark.KindBid:
				r := q.bid(&e.Bid, e.ID)
				kg := keygroup.ForKeyHash(bidKey.hash(r), maxPar)
				bids = append(bids, Record{Kind: Insert, KeyGroup: int32(kg), Row: r})
			}
		}
		b.StartTimer()
		cpu0 := benchThreadCPU(b)
		if len(auctions) > 0 {
			if err := op.Process(auctionInput, auctions, &out); err != nil {
				b.Fatal(err)
			}
		}
		if len(bids) > 0 {
			if err := op.Process(bidInput, bids, &out); err != nil {
				b.Fatal(err)
			}
		}
		store.EndBatch()
		cpu += benchThreadCPU(b) - cpu0
		done += n
		if batches%interval == interval-1 {
			b.StopTimer()
			id++
			if backend == "pebble" {
				if _, err := store.Flush(id); err != nil {
					b.Fatal(err)
				}
			} else {
				if frozen, err = store.Freeze(id); err != nil {
					b.Fatal(err)
				}
				if _, err := frozen.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "thread-cpu-ns/op")
	b.ReportMetric(float64(out.n)/float64(b.N), "out/op")
}
