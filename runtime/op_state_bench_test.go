package runtime

import (
	goruntime "runtime"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkStateOps drives the operators that keep one row or list per key
// with nexmark events shaped as the queries feed them: q18's keep-last
// deduplication of bids, q9's top-1 per auction of joined auction and bid
// rows, and q4's two aggregates (MAX per auction, then COUNT, SUM, AVG per
// category of those maxima). An op is one event. Batches are 16,384 events
// (the runtime's source batch), a checkpoint interval 8 batches. The making of the input rows runs
// outside the timed path; thread-cpu-ns/op is the operators' CPU on the
// benchmark's thread, flush-cpu-ns/op the checkpoints' (Freeze and Commit
// on paimon, Flush on pebble).
func BenchmarkStateOps(b *testing.B) {
	for _, q := range []string{"q18", "q9", "q4"} {
		for _, backend := range []string{"paimon", "pebble"} {
			b.Run(q+"/"+backend, func(b *testing.B) { benchStateOps(b, q, backend) })
		}
	}
}

// opsBench is a chain of operators and how nexmark events become its input.
type opsBench struct {
	ops  []Operator
	keys []keySpec // each operator's input key
	// input turns an event into the first operator's input row (nil: none).
	input func(e *nexmark.Event) Row
}

func opsBenchOf(name string) opsBench {
	i64, str := Column{Type: table.BigInt()}, Column{Type: table.String()}
	g := NewGraph()
	source := func(s Schema) Stream {
		return g.Source("in", &RowsSource{Schema: s, Rows: [][]Row{nil}})[0]
	}
	var out []Stream
	var ob opsBench
	switch name {
	case "q18":
		in := source(Schema{i64, i64, i64, str, str, i64, str, i64})
		out = append(out, Deduplicate("last", in, DedupSpec{
			Key: []int{0, 1}, // as nexmark/jobs/q18.go
			Replaces: func(b, kept Row) bool {
				if b[5].Int() != kept[5].Int() {
					return b[5].Int() > kept[5].Int()
				}
				return b[7].Int() > kept[7].Int()
			},
		}))
		ob.input = func(e *nexmark.Event) Row {
			if e.Kind != nexmark.KindBid {
				return nil
			}
			b := &e.Bid
			return Row{subtask.Int(b.Auction), subtask.Int(b.Bidder), subtask.Int(b.Price), subtask.Str(b.Channel),
				subtask.Str(b.URL), subtask.Int(b.DateTime), subtask.Str(b.Extra), subtask.Int(e.ID)}
		}
	case "q9":
		// [auction columns (10)..., bidder, price, bidDateTime, bidExtra, eventID]
		in := source(Schema{i64, str, str, i64, i64, i64, i64, i64, i64, str, i64, i64, i64, str, i64})
		out = append(out, TopN("winner", in, TopNSpec{
			Partition: []int{0},
			N:         1,
			Less: func(a, b Row) bool {
				if a[11].Int() != b[11].Int() {
					return a[11].Int() > b[11].Int()
				}
				if a[12].Int() != b[12].Int() {
					return a[12].Int() < b[12].Int()
				}
				return a[14].Int() < b[14].Int()
			},
		}))
		auctions := map[int64]Row{}
		ob.input = func(e *nexmark.Event) Row {
			switch e.Kind {
			case nexmark.KindAuction:
				a := &e.Auction
				auctions[a.ID] = Row{subtask.Int(a.ID), subtask.Str(a.ItemName), subtask.Str(a.Description), subtask.Int(a.InitialBid),
					subtask.Int(a.Reserve), subtask.Int(a.DateTime), subtask.Int(a.Expires), subtask.Int(a.Seller),
					subtask.Int(a.Category), subtask.Str(a.Extra)}
			case nexmark.KindBid:
				b := &e.Bid
				a, ok := auctions[b.Auction]
				if !ok || b.DateTime < a[5].Int() || b.DateTime > a[6].Int() {
					return nil
				}
				return append(a[:10:10], subtask.Int(b.Bidder), subtask.Int(b.Price), subtask.Int(b.DateTime),
					subtask.Str(b.Extra), subtask.Int(e.ID))
			}
			return nil
		}
	case "q4":
		// [id, category, price]
		in := source(Schema{i64, i64, i64})
		closing := Aggregate("closing", in, []int{0, 1}, Max("final", 2))
		out = append(out, closing, Aggregate("average", closing, []int{1},
			Count("auctions"), Sum("sum", 2), Avg("avg", 2)))
		category := map[int64][3]int64{}
		ob.input = func(e *nexmark.Event) Row {
			switch e.Kind {
			case nexmark.KindAuction:
				a := &e.Auction
				category[a.ID] = [3]int64{a.Category, a.DateTime, a.Expires}
			case nexmark.KindBid:
				b := &e.Bid
				a, ok := category[b.Auction]
				if !ok || b.DateTime < a[1] || b.DateTime > a[2] {
					return nil
				}
				return Row{subtask.Int(b.Auction), subtask.Int(a[0]), subtask.Int(b.Price)}
			}
			return nil
		}
	default:
		panic(name)
	}
	if g.err != nil {
		panic(g.err)
	}
	for _, s := range out {
		ob.ops = append(ob.ops, s.from.newOp())
		ob.keys = append(ob.keys, s.from.inputs[0].key)
	}
	return ob
}

// collectingEmitter keeps the records emitted, keyed for the next operator.
type collectingEmitter struct {
	key  *keySpec // nil: count only
	recs []Record
	n    int
}

func (e *collectingEmitter) Emit(c Change, r Row) {
	e.n++
	if e.key != nil {
		e.recs = append(e.recs, Record{Kind: c, KeyGroup: int32(keygroup.ForKeyHash(e.key.hash(r), opsBenchMaxPar)), Row: r})
	}
}

const opsBenchMaxPar = 128

func benchStateOps(b *testing.B, query, backend string) {
	const batch, interval = 16384, 8
	ob := opsBenchOf(query)
	// Each operator keeps its own store, as a subtask does.
	stores := make([]*subtask.Store, len(ob.ops))
	outs := make([]collectingEmitter, len(ob.ops))
	for i, op := range ob.ops {
		be := openBenchBackend(b, backend)
		stores[i] = subtask.NewStore(be)
		ctx := &OperatorContext{Store: stores[i], KeyGroups: keygroup.Range{Start: 0, End: opsBenchMaxPar - 1}, MaxParallelism: opsBenchMaxPar}
		if err := op.Open(ctx); err != nil {
			b.Fatal(err)
		}
		if i+1 < len(ob.ops) {
			outs[i].key = &ob.keys[i+1]
		}
	}

	gen, err := nexmark.NewGenerator(nexmark.DefaultConfig(), 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	events := make([]nexmark.Event, batch)
	var in []Record
	frozen := make([]*subtask.FrozenFlush, len(stores))
	var cpu, flushCPU int64
	id := int64(0)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	b.ResetTimer()
	for done, batches := 0, 0; done < b.N; batches++ {
		b.StopTimer()
		for i, f := range frozen {
			if batches%interval == 1 && f != nil {
				if err := stores[i].Release(f, true, nil); err != nil {
					b.Fatal(err)
				}
				frozen[i] = nil
			}
		}
		n := gen.Next(events[:min(batch, b.N-done)])
		in = in[:0]
		for i := range events[:n] {
			if r := ob.input(&events[i]); r != nil {
				kg := keygroup.ForKeyHash(ob.keys[0].hash(r), opsBenchMaxPar)
				in = append(in, Record{Kind: Insert, KeyGroup: int32(kg), Row: r})
			}
		}
		b.StartTimer()
		cpu0 := benchThreadCPU(b)
		recs := in
		for i, op := range ob.ops {
			outs[i].recs = outs[i].recs[:0]
			if len(recs) > 0 {
				if err := op.Process(0, recs, &outs[i]); err != nil {
					b.Fatal(err)
				}
			}
			recs = outs[i].recs
		}
		for _, s := range stores {
			s.EndBatch()
		}
		cpu += benchThreadCPU(b) - cpu0
		done += n
		if batches%interval == interval-1 {
			id++
			cpu0 := benchThreadCPU(b)
			for i, s := range stores {
				if backend == "pebble" {
					if _, err := s.Flush(id); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if frozen[i], err = s.Freeze(id); err != nil {
					b.Fatal(err)
				}
				if _, err := frozen[i].Commit(); err != nil {
					b.Fatal(err)
				}
			}
			flushCPU += benchThreadCPU(b) - cpu0
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "thread-cpu-ns/op")
	b.ReportMetric(float64(flushCPU)/float64(b.N), "flush-cpu-ns/op")
	b.ReportMetric(float64(outs[len(outs)-1].n)/float64(b.N), "out/op")
}
