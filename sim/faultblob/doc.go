// Package faultblob is an in-memory barrier.BlobStore whose faults come from
// a seeded *rand.Rand: transient failures before an operation takes effect,
// and ambiguous timeouts after which the operation may or may not have taken
// effect. It has no latency of its own; a per-operation hook lets the caller
// model latency with clock steps or interleave other work.
package faultblob
