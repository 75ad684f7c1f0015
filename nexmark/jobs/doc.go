// Package jobs builds the Nexmark benchmark queries as runtime jobs: a
// replayable source over the nexmark generator, one graph per query from
// runtime's operators, and the conversion of a query's committed sink rows
// into the nexmark package's output type, so that a run compares with the
// reference implementation by digest.
package jobs
