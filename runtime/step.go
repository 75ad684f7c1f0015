package runtime

import "slices"

// step is one stateless transformation chained into an edge: a filter or a
// map. Steps keep the record's changelog kind, so they apply to retractions
// exactly as to the rows they retract.
type step struct {
	filter  func(Row) bool
	mapRow  func(Row) Row
	project []int
}

func (s Stream) with(st step, schema Schema) Stream {
	s.chain = append(slices.Clip(s.chain), st)
	s.schema = schema
	return s
}

// Filter keeps the rows for which keep returns true. keep must not hold on
// to its argument.
func (s Stream) Filter(keep func(Row) bool) Stream {
	return s.with(step{filter: keep}, s.schema)
}

// Map replaces every row by fn(row), a row of schema. fn must not modify its
// argument and must be deterministic: a retraction has to map to the row its
// insertion mapped to.
func (s Stream) Map(schema Schema, fn func(Row) Row) Stream {
	return s.with(step{mapRow: fn}, schema)
}

// Project keeps the given columns, in the given order.
func (s Stream) Project(cols ...int) Stream {
	schema := make(Schema, len(cols))
	for i, c := range cols {
		if c < 0 || c >= len(s.schema) {
			s.g.fail("project: column %d outside the %d columns of the stream", c, len(s.schema))
			return s
		}
		schema[i] = s.schema[c]
	}
	// A non-nil list, even when empty, marks the step as a projection.
	return s.with(step{project: append([]int{}, cols...)}, schema)
}

// applyChain runs a row through an edge's steps; false means a filter
// dropped it. Projected rows come from rows.
func applyChain(chain []step, r Row, rows *rowArena) (Row, bool) {
	for i := range chain {
		st := &chain[i]
		switch {
		case st.filter != nil:
			if !st.filter(r) {
				return nil, false
			}
		case st.project != nil:
			out := rows.take(len(st.project))
			for j, c := range st.project {
				out[j] = r[c]
			}
			r = out
		default:
			r = st.mapRow(r)
		}
	}
	return r, true
}

// projectsFirst reports whether a chain copies its row into a projection
// before anything but filters sees it: the row it starts from is then read
// only while the chain runs.
func projectsFirst(chain []step) bool {
	for i := range chain {
		switch st := &chain[i]; {
		case st.filter != nil:
		case st.project != nil:
			return true
		default:
			return false
		}
	}
	return false
}
