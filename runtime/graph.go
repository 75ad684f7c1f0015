package runtime

import (
	"errors"
	"fmt"
	"strings"
)

// Graph is a job's dataflow under construction. Building never fails on the
// spot: the first mistake is kept and Start reports it.
type Graph struct {
	nodes []*node
	names map[string]bool
	err   error
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{names: map[string]bool{}} }

// Err is the first error met while building the graph.
func (g *Graph) Err() error { return g.err }

func (g *Graph) fail(format string, args ...any) {
	if g.err == nil {
		g.err = fmt.Errorf(format, args...)
	}
}

type nodeKind uint8

const (
	kindSource nodeKind = iota + 1
	kindOperator
	kindSink
)

// node is one operator of the graph: a source, an operator or a sink.
type node struct {
	id     int
	name   string
	kind   nodeKind
	source Source
	// newOp makes the operator of one subtask (operators and sinks).
	newOp   func() Operator
	inputs  []*edge
	outs    [][]*edge // per output, the edges that consume it
	schemas []Schema  // per output
}

// keyed reports whether the node's inputs arrive by key, so its subtasks
// own key groups and keep a store.
func (n *node) keyed() bool {
	return len(n.inputs) > 0 && n.inputs[0].key.cols != nil
}

// edge carries one output of a node, through a chain of stateless steps, to
// one input of another node.
type edge struct {
	from   *node
	output int
	chain  []step
	to     *node
	input  int
	key    keySpec // empty: forward, subtask i to subtask i
}

// Stream is one output of a node with the stateless steps applied to it so
// far. Streams are values: a step returns a new Stream and leaves its
// receiver usable, so one output can feed several consumers.
type Stream struct {
	g      *Graph
	from   *node
	output int
	chain  []step
	schema Schema
}

// Schema is the schema of the stream's rows.
func (s Stream) Schema() Schema { return s.schema }

func (g *Graph) addNode(name string, kind nodeKind) *node {
	switch {
	case name == "" || strings.ContainsAny(name, "/.\x00"):
		g.fail("operator name %q must be non-empty and hold no '/' or '.'", name)
	case g.names[name]:
		g.fail("operator name %q used twice", name)
	}
	g.names[name] = true
	n := &node{id: len(g.nodes), name: name, kind: kind}
	g.nodes = append(g.nodes, n)
	return n
}

// Source adds a source and returns one stream per output.
func (g *Graph) Source(name string, src Source) []Stream {
	n := g.addNode(name, kindSource)
	n.source = src
	n.schemas = src.Schemas()
	if len(n.schemas) == 0 {
		g.fail("source %q has no outputs", name)
	}
	if src.Splits() < 1 {
		g.fail("source %q has %d splits", name, src.Splits())
	}
	n.outs = make([][]*edge, len(n.schemas))
	out := make([]Stream, len(n.schemas))
	for i, s := range n.schemas {
		out[i] = Stream{g: g, from: n, output: i, schema: s}
	}
	return out
}

// Apply adds an operator with one subtask per parallel instance, made by
// newOp. inputs[i] arrives keyed by keys[i] (columns of that input); every
// input must be keyed, or none (then keys is nil and each subtask reads the
// same-numbered subtask of its inputs). The operator emits rows of schema.
func Apply(name string, inputs []Stream, keys [][]int, schema Schema, newOp func() Operator) Stream {
	if len(inputs) == 0 {
		panic("runtime: Apply without inputs")
	}
	g := inputs[0].g
	n := g.addNode(name, kindOperator)
	n.newOp = newOp
	n.schemas = []Schema{schema}
	n.outs = make([][]*edge, 1)
	if keys != nil && len(keys) != len(inputs) {
		g.fail("operator %q: %d inputs, %d keys", name, len(inputs), len(keys))
	} else {
		for i, in := range inputs {
			var k []int
			if keys != nil {
				k = keys[i]
				if k == nil {
					g.fail("operator %q: input %d is not keyed and others are", name, i)
				}
			}
			g.connect(in, n, i, k)
		}
	}
	return Stream{g: g, from: n, schema: schema}
}

func (g *Graph) connect(s Stream, to *node, input int, key []int) {
	if s.g != g {
		g.fail("operator %q: input %d belongs to another graph", to.name, input)
		return
	}
	e := &edge{from: s.from, output: s.output, chain: s.chain, to: to, input: input}
	if key != nil {
		k, err := newKeySpec(s.schema, key)
		if err != nil {
			g.fail("operator %q: input %d: %v", to.name, input, err)
		}
		e.key = k
	}
	to.inputs = append(to.inputs, e)
	s.from.outs[s.output] = append(s.from.outs[s.output], e)
}

// errNoSinks is reported for a graph whose streams end nowhere.
var errNoSinks = errors.New("graph has no sink")

// validate checks what the builders could not: every node has consumers or
// is a sink.
func (g *Graph) validate() error {
	if g.err != nil {
		return g.err
	}
	sinks := 0
	for _, n := range g.nodes {
		if n.kind == kindSink {
			sinks++
			continue
		}
		used := false
		for _, es := range n.outs {
			used = used || len(es) > 0
		}
		if !used {
			return fmt.Errorf("output of %q is consumed by nothing", n.name)
		}
	}
	if sinks == 0 {
		return errNoSinks
	}
	return nil
}
