package nexmark

// Query names a benchmark query and its reference implementation.
type Query struct {
	Name string
	// Reference computes the query's final output from the complete event
	// sequence of a run: the events of every source subtask, in any order.
	Reference func(events []Event) Output
}

// Queries lists the queries the engine runs, in benchmark order.
func Queries() []Query {
	return []Query{
		{"q4", func(e []Event) Output { return Q4(e) }},
		{"q5", func(e []Event) Output { return Q5(e) }},
		{"q7", func(e []Event) Output { return Q7(e) }},
		{"q9", func(e []Event) Output { return Q9(e) }},
		{"q18", func(e []Event) Output { return Q18(e) }},
		{"q20", func(e []Event) Output { return Q20(e) }},
	}
}

// LookupQuery returns the query called name.
func LookupQuery(name string) (Query, bool) {
	for _, q := range Queries() {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}
