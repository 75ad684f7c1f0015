package runtime

import (
	"github.com/lakestate/lakestate/keygroup"
)

// plan is a graph laid out at a parallelism: one task per subtask of every
// node, and the channels between them. Channel numbers are per task: a
// task's input channels are numbered by input, then upstream subtask; its
// output channels by output, edge, then downstream subtask.
type plan struct {
	parallelism, maxParallelism int
	nodes                       []*node
	base                        []int // global index of each node's subtask 0
	tasks                       []*taskPlan
	// owner maps a key group to the subtask that owns it.
	owner []int32
}

type taskPlan struct {
	global    int
	node      *node
	id        TaskID
	keyGroups keygroup.Range
	ins       []inChan
	outs      []outChan
	outEdges  []outEdge
}

// inChan is an input channel: which input it feeds and where it comes from.
type inChan struct {
	input    int
	fromTask int
	fromOut  int // the channel's number at the sender
}

// outChan is an output channel: where it goes.
type outChan struct {
	toTask int
	toIn   int // the channel's number at the receiver
}

// outEdge is one edge as a sending task sees it: its channels start at
// first, one per downstream subtask (one in all for a forward edge).
type outEdge struct {
	edge  *edge
	first int
}

func newPlan(g *Graph, parallelism, maxParallelism int) (*plan, error) {
	if err := keygroup.Validate(maxParallelism, parallelism); err != nil {
		return nil, err
	}
	p := &plan{parallelism: parallelism, maxParallelism: maxParallelism, nodes: g.nodes}
	p.owner = make([]int32, maxParallelism)
	for kg := range p.owner {
		p.owner[kg] = int32(keygroup.SubtaskForKeyGroup(maxParallelism, parallelism, kg))
	}
	for _, n := range g.nodes {
		p.base = append(p.base, len(p.tasks))
		for i := range parallelism {
			p.tasks = append(p.tasks, &taskPlan{
				global:    len(p.tasks),
				node:      n,
				id:        TaskID{Operator: n.name, Subtask: i},
				keyGroups: keygroup.RangeForSubtask(maxParallelism, parallelism, i),
			})
		}
	}
	type link struct {
		e        *edge
		from, to int
	}
	inIndex := map[link]int{}
	for _, t := range p.tasks {
		for _, e := range t.node.inputs {
			for _, u := range p.peers(e, t.id.Subtask) {
				inIndex[link{e, u, t.id.Subtask}] = len(t.ins)
				t.ins = append(t.ins, inChan{input: e.input, fromTask: p.base[e.from.id] + u})
			}
		}
	}
	for _, t := range p.tasks {
		for _, es := range t.node.outs {
			for _, e := range es {
				t.outEdges = append(t.outEdges, outEdge{edge: e, first: len(t.outs)})
				for _, d := range p.peers(e, t.id.Subtask) {
					to := p.tasks[p.base[e.to.id]+d]
					in := inIndex[link{e, t.id.Subtask, d}]
					to.ins[in].fromOut = len(t.outs)
					t.outs = append(t.outs, outChan{toTask: to.global, toIn: in})
				}
			}
		}
	}
	return p, nil
}

// peers lists the subtasks at the other end of edge e from subtask i: all of
// them for a keyed edge, i alone for a forward edge.
func (p *plan) peers(e *edge, i int) []int {
	if e.key.cols == nil {
		return []int{i}
	}
	all := make([]int, p.parallelism)
	for j := range all {
		all[j] = j
	}
	return all
}

// nodeTasks returns the tasks of a node.
func (p *plan) nodeTasks(n *node) []*taskPlan {
	return p.tasks[p.base[n.id] : p.base[n.id]+p.parallelism]
}
