// Package nexmark owns the Nexmark benchmark as pure data: the event model
// (Person, Auction, Bid and the Event union), a deterministic, splittable and
// replayable event generator that reproduces the nexmark-flink generator's
// ids, timestamps and field distributions, and the definitions of the
// benchmark queries the engine runs (q4, q5, q7, q9, q18, q20) together with
// in-memory reference implementations of their final outputs.
//
// The reference implementations evaluate a query over the complete event
// sequence, the way a batch engine would, and return the rows a streaming
// job's updating output table holds once every event has been processed and
// every retraction applied. Their rows have a canonical order and a canonical
// text form (WriteText, Digest) so that runs on every state backend, at every
// parallelism and through every failure can be compared with one string.
//
// Where the nexmark-flink SQL leaves a result undefined (ties in ROW_NUMBER
// orderings), the query's doc comment fixes the choice; every choice can be
// computed incrementally by streaming operators with retractions.
//
// Operators and the dataflow that run these queries on state backends live in
// runtime/; nothing here knows about state, checkpoints or actors.
package nexmark
