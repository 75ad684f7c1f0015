package runtime

import (
	"testing"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/subtask"
)

// A channel fills the batches its receiver handed back with the credits,
// and never the batch in flight.
func TestOutputsRefillSpentBatches(t *testing.T) {
	var sent []*dataMsg
	o := &outputs{
		byOutput: [][]int{{0}},
		edges:    []sendEdge{{}},
		chans:    []sendChan{{credits: 4}},
		send:     func(_ *actor.PID, m any) { sent = append(sent, m.(*dataMsg)) },
	}
	row := Row{subtask.Int(1)}
	same := func(a, b []Record) bool { return unsafe.SliceData(a) == unsafe.SliceData(b[:1]) }
	o.emit(0, Insert, row)
	o.flush()
	o.emit(0, Insert, row)
	if same(o.chans[0].batch, sent[0].recs) {
		t.Fatal("the next batch is the one in flight")
	}
	o.flush()
	spent := sent[0].recs
	clear(spent)
	o.credit(0, 1, [][]Record{spent[:0]})
	o.emit(0, Delete, row)
	o.flush()
	if len(sent) != 3 || !same(sent[2].recs, spent) {
		t.Fatalf("%d batches sent; the third is not the spent first one", len(sent))
	}
	if r := sent[2].recs; len(r) != 1 || r[0].Kind != Delete {
		t.Fatalf("refilled batch holds %v", r)
	}
	o.emit(0, Insert, row)
	if same(o.chans[0].batch, spent) {
		t.Fatal("a spent batch was handed out twice")
	}
}
