package jobs

import (
	"fmt"

	"github.com/lakestate/lakestate/nexmark"
	"github.com/lakestate/lakestate/runtime"
)

// Query is a Nexmark query as a runtime job.
type Query struct {
	Name string
	// Build adds the query's operators to a graph, reading the source's
	// outputs, and returns the stream its sink takes.
	Build func(src []runtime.Stream) runtime.Stream
	// Output turns the rows the sink committed into the query's output, in
	// canonical order.
	Output func(rows []runtime.Row) nexmark.Output
}

// Queries lists the queries, in benchmark order.
func Queries() []Query {
	return []Query{q4, q9, q18, q20}
}

// WindowQueries lists the queries over event-time windows. Their output
// appears only as the watermark passes window ends, so a run shows it only
// once its input spans more event time than a window.
func WindowQueries() []Query {
	return []Query{q5, q7}
}

// Lookup returns the query called name.
func Lookup(name string) (Query, bool) {
	for _, q := range append(Queries(), WindowQueries()...) {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

// Graph builds the job of query q over the Nexmark source with splits
// generator splits, ending in a sink named "sink" that commits to c.
func Graph(q Query, cfg nexmark.Config, splits int, c runtime.Committer) (*runtime.Graph, error) {
	g := runtime.NewGraph()
	src := g.Source("nexmark", &Source{Config: cfg, NumSplits: splits})
	q.Build(src).Sink("sink", c)
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q.Name, err)
	}
	return g, nil
}
