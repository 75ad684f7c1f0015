// Package runtime owns the embedded dataflow that runs keyed streaming jobs on
// the subtask stores: a job graph of sources, stateful operators and
// exactly-once sinks, executed as one actor per operator subtask.
//
// # Graph
//
// A [Graph] is built from [Stream] values: [Graph.Source] reads a
// replayable [Source], stateless steps ([Stream.Filter], [Stream.Map],
// [Stream.Project]) are chained into the edge that carries them, and the
// stateful operators ([Join], [Aggregate], [TopN], [Deduplicate], or any
// [Operator] through [Apply]) receive their inputs through a keyed exchange:
// every record goes to the subtask owning its key group (see keygroup/).
// [Stream.Sink] ends a stream in an exactly-once sink over a [Committer].
//
// Records travel in batches and carry a changelog kind ([Change]: +I, -U, +U,
// -D), so operators that revise earlier output (aggregates, top-N, dedup)
// retract it and downstream operators and sinks apply the retraction.
//
// # Execution
//
// [Start] runs a graph at a parallelism p with a maximum parallelism that fixes
// the key groups. Every operator subtask is an actor spawned through
// actors.System, so a job runs the same on the real system and in a
// simulation. Channels between subtasks are credit-based: a sender keeps a few
// batches in flight per channel, and a subtask returns credits only when its
// own output is not backlogged, so a slow operator slows the sources.
// Sources emit watermarks; a subtask's watermark is the minimum over its
// input channels.
//
// # Checkpoints
//
// A checkpoint n starts at the sources, which record their split offsets and
// inject barrier n into every output channel. A subtask with several input
// channels aligns: a channel that delivered barrier n is held until every
// channel has, then the subtask forwards the barrier and runs its sync phase
// through the [Checkpointer] seam (flush of its store, the state handle,
// operator extras such as source offsets and sink transactions), then
// resumes. The job's coordinator completes n once every subtask acknowledged
// it, stores the [Snapshot] and sends [CheckpointComplete]; the sinks commit
// the output they staged up to barrier n only then. A restore from a snapshot
// at any parallelism adopts or clips each subtask's state by key-group range
// and re-commits the sink transactions the snapshot still holds, so output
// is exactly once.
package runtime
