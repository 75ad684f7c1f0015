package runtime

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/keygroup"
)

// outputs is the sending side of a task: it runs emitted rows through each
// consuming edge's steps, routes them by key group, gathers them into one
// batch per channel and sends the batches under credit-based flow control.
// A channel holds credits for a few data batches in flight; past them, data
// and the control messages behind it (barriers, watermarks, end) queue in
// order until the receiver returns credits.
type outputs struct {
	maxParallelism int
	owner          []int32
	byOutput       [][]int // per node output, indexes into edges
	edges          []sendEdge
	chans          []sendChan
	// backlog counts queued messages over all channels.
	backlog int
	// rows holds the rows the edges' steps build.
	rows rowArena
	send func(to *actor.PID, msg any)
}

type sendEdge struct {
	chain []step
	key   keySpec
	first int
}

type sendChan struct {
	to      *actor.PID
	toIn    int32
	credits int
	queue   []any
	// batch gathers the records to send next; nil until the first one
	// comes, which takes a spare batch if there is one. size is the
	// capacity of the last batch sent.
	batch []Record
	size  int
	// spare is batches the receiver is done with, to be filled again.
	spare [][]Record
}

func newOutputs(p *plan, t *taskPlan, pids []*actor.PID, credits int, send func(*actor.PID, any)) *outputs {
	o := &outputs{
		maxParallelism: p.maxParallelism,
		owner:          p.owner,
		byOutput:       make([][]int, len(t.node.schemas)),
		send:           send,
	}
	for _, oe := range t.outEdges {
		o.byOutput[oe.edge.output] = append(o.byOutput[oe.edge.output], len(o.edges))
		o.edges = append(o.edges, sendEdge{chain: oe.edge.chain, key: oe.edge.key, first: oe.first})
	}
	for _, c := range t.outs {
		o.chans = append(o.chans, sendChan{to: pids[c.toTask], toIn: int32(c.toIn), credits: credits})
	}
	return o
}

// emit sends a record of a node output to every edge that consumes it.
func (o *outputs) emit(output int, kind Change, row Row) {
	for _, ei := range o.byOutput[output] {
		e := &o.edges[ei]
		r, ok := row, true
		if len(e.chain) > 0 {
			if r, ok = applyChain(e.chain, row, &o.rows); !ok {
				continue
			}
		}
		ch, kg := e.first, int32(-1)
		if e.key.cols != nil {
			kg = int32(keygroup.ForKeyHash(e.key.hash(r), o.maxParallelism))
			ch += int(o.owner[kg])
		}
		c := &o.chans[ch]
		if c.batch == nil {
			c.batch = c.nextBatch()
		}
		c.batch = append(c.batch, Record{Kind: kind, KeyGroup: kg, Row: r})
	}
}

// flush sends every channel's gathered batch.
func (o *outputs) flush() {
	for i := range o.chans {
		c := &o.chans[i]
		if len(c.batch) == 0 {
			continue
		}
		msg := &dataMsg{ch: c.toIn, recs: c.batch}
		c.size, c.batch = cap(c.batch), nil
		o.deliver(c, msg, true)
	}
}

// nextBatch returns an empty batch to gather records in: a spare one, or
// one as large as the last.
func (c *sendChan) nextBatch() []Record {
	if n := len(c.spare); n > 0 {
		b := c.spare[n-1]
		c.spare[n-1] = nil
		c.spare = c.spare[:n-1]
		return b
	}
	return make([]Record, 0, max(c.size, 1))
}

// broadcast flushes and then sends a control message to every channel; mk
// builds the message for a receiver's channel number.
func (o *outputs) broadcast(mk func(ch int32) any) {
	o.flush()
	for i := range o.chans {
		c := &o.chans[i]
		o.deliver(c, mk(c.toIn), false)
	}
}

func (o *outputs) deliver(c *sendChan, msg any, data bool) {
	if len(c.queue) == 0 && (!data || c.credits > 0) {
		if data {
			c.credits--
		}
		o.send(c.to, msg)
		return
	}
	c.queue = append(c.queue, msg)
	o.backlog++
}

// credit returns n credits to channel ch, with the batches the receiver is
// done with, and sends what they release.
func (o *outputs) credit(ch, n int, spent [][]Record) {
	c := &o.chans[ch]
	c.credits += n
	c.spare = append(c.spare, spent...)
	for len(c.queue) > 0 {
		msg := c.queue[0]
		_, data := msg.(*dataMsg)
		if data {
			if c.credits == 0 {
				break
			}
			c.credits--
		}
		c.queue[0] = nil
		c.queue = c.queue[1:]
		o.backlog--
		o.send(c.to, msg)
	}
}
