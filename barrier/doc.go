// Package barrier owns checkpoint storage and bookkeeping: the BlobStore that
// checkpoint files live in, the checkpoint metadata format, the shared-state
// registry that reference-counts files shared between incremental
// checkpoints, the retention policy that decides which completed checkpoints
// are kept, and restore planning onto a new parallelism.
//
// The pieces here are pure state machines and plain functions with all I/O
// behind the BlobStore interface, in the etcd raft style: the coordinator and
// uploader actors decode messages and call these methods, and every rule is
// unit-testable without actors.
//
// Around them run the checkpoint actors: the Coordinator (triggers, collects
// acknowledgements, writes the metadata, notifies completion or abort,
// retains the last checkpoints and sweeps orphans when it starts), the
// Uploader (bounded, retried uploads that discard what they put when they
// fail or are cancelled), and one Store actor per operator subtask (the sync
// phase over the subtask's lent store: flush, listing, reuse decision against
// the last confirmed checkpoint, hand-off to the uploader), with the
// per-store reuse History and RestoreSubtask (aligned adoption or a
// key-group clip) beside them. For a paimon store the Store actor also owns
// each state table's maintenance: an agent per table runs its compaction
// Maintainer and listing Lister, asks for the barrier's round and listing,
// and keeps the table's pins (checkpoints in flight, the snapshot the
// subtask reads, the one it reads after the next release). barrier imports
// subtask, never the reverse.
//
// A paimon store's sync phase is asynchronous: at Barrier(n) the Store
// actor releases n-1's frozen flush (the reads move to n-1's round
// snapshots; after a failure its rows stay for the freeze to fold in) and
// freezes the write buffers, then answers SyncDone at once. The commit of
// the frozen rows, the tables' rounds, the listing, the reuse decision, the
// links and the hand-off follow while the subtask processes the next
// interval, which reads through the frozen layer. Barrier(n+1) waits, the
// store lent, until n's rounds are known or n failed. A failure declines n
// and its rows go into the next commit; an abort after SyncDone still runs
// the commit and the rounds and cancels only the upload; Drain waits for
// the whole phase. Upload counts go to StoreConfig.Stats as UploadStats.
//
// A Store actor's state is not rebuilt after a panic: one that its
// supervisor restarts stops at once, and the job fails over to its last
// completed checkpoint. Whoever closes a subtask's store shares a
// StoreFence with its Store actor, so that the store closes only once no
// executor job of the actor uses it and later jobs are refused.
//
// The rules follow Flink's incremental checkpoints: a checkpoint references
// (by placeholder) only files that a registered checkpoint uploaded; a
// re-upload of a confirmed file is discarded in favour of the confirmed copy;
// a new upload of an unconfirmed file becomes the copy later checkpoints
// resolve to; aborting a checkpoint releases only its own references; and
// every transition reports exactly which blobs nothing retained or pending
// refers to any more, so nothing is lost and nothing leaks.
package barrier
