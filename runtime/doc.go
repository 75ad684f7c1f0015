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
// own output is not backlogged, so a slow operator slows the sources. A
// paimon store whose maintenance falls behind (too many sorted runs) holds
// the sources until a barrier's maintenance round catches up.
// Sources emit watermarks; a subtask's watermark is the minimum over its
// input channels.
//
// # Checkpoints
//
// Checkpoints are barrier/'s: each run has a Coordinator over a blob store
// (by default a local directory, barrier/blobdir), an Uploader, and a Store
// actor per subtask. The coordinator numbers checkpoints after every one the
// blob store holds, so ids never repeat across runs; the job asks it for one
// at a time (periodically, on request, and once when every sink's input has
// ended) and injects barrier n at the sources, which record their split
// offsets. A subtask with several input channels aligns: a channel that
// delivered barrier n is held until every channel has, then the subtask
// forwards the barrier and runs its sync phase through the [Checkpointer]
// seam: its Store actor flushes the lent store, lists its files, decides
// what to upload against the last confirmed checkpoint and lets the subtask
// resume, then uploads and acknowledges with the operator's extras (source
// offsets, sink transactions). Once every subtask acknowledged, the
// coordinator writes the checkpoint's metadata and sends Complete; the sinks
// commit the output they staged up to barrier n only then. A run restored
// from the latest completed checkpoint, at any parallelism, adopts or clips
// each subtask's state by key-group range, gives every operator the extras
// of all old subtasks, and re-commits the sink transactions the checkpoint
// still holds, so output is exactly once.
package runtime
