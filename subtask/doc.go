// Package subtask owns the keyed state of one operator subtask: its state
// tables, the write buffer that holds everything written since the last
// barrier, the per-batch read path and the flush that turns the buffer into
// one sorted commit per table at a barrier.
//
// # Stores
//
// A [Store] holds the states an operator registers, each a state table with a
// [Layout]: a primary key that always starts with the key group (an INT, so a
// key-group range is a key range), the operator's key columns and, for the
// kinds that keep many rows per key, entry-key columns:
//
//	value  [kg, key]             one row per key (aggregates, dedup)
//	list   [kg, key, ord]        an ordered list per key (top-N buffers)
//	map    [kg, key, sub...]     entries per key (join sides); a flush writes
//	                             only entries that differ from the image read
//	                             from the table and tombstones vanished ones
//	time   [kg, key, time, seq]  time-ordered rows (windows, interval joins,
//	                             timers); range reads merge the buffer with the
//	                             committed table
//
// Operators work in batches: a batch's keys that the buffer lacks are read
// from the committed table with one sorted probe, the rows read stay until
// [Store.EndBatch], and writes land in the buffer. No clean row survives a
// batch: re-reads go to the backend again. [Store.Flush] is the sync-phase
// entry point of a checkpoint: it commits the buffer (one sorted batch per
// table, at most one row per primary key) and empties it.
//
// The Store is a plain state machine with no actors and no clock of its own:
// the caller sets processing time with [Store.SetNow], which drives state TTL
// (a row written at t with ttl d reads as absent from t+d on, inclusive, and is
// tombstoned by the next flush). Timestamps are absolute, so they survive a
// restore unchanged, and a rescale clip drops rows already expired.
//
// # Keys and rows
//
// Rows are slices of [Datum], a small typed scalar; Arrow appears only at the
// paimon backend's boundary. Inside the store a key is its order-preserving
// encoding (see [Layout.AppendKey]): byte order equals the table's key order,
// so the buffer sorts with bytes comparisons and a key prefix or key-group range
// is a byte range.
//
// # Backends
//
// A [Backend] keeps the committed tables. paimon (the product) keeps each state
// table as a Paimon primary-key table in a local directory and commits the
// buffer with one APPEND snapshot per table; the maintenance round, listing and
// upload that follow are the barrier's business. memory keeps Go maps and
// serializes the whole state at every checkpoint (the A/B baseline). pebble
// keeps one Pebble database per store with the WAL off and checkpoints by flush
// plus hard-link checkpoint.
//
// # Asynchronous barrier
//
// A paimon store can take its barrier asynchronously. [Store.Freeze] ends the
// interval by making every state's write buffer the frozen part of a flush
// (immutable from then on) and starting the buffers empty, so the operator
// resumes at once; reads see the live buffer over the frozen buffer over the
// pinned committed view, for every kind of state and read, and the frozen
// keys widen the key bounds at the freeze. [FrozenFlush.Commit] builds the
// rows (the diffs against the images read, sorted), the Arrow records and the
// APPEND snapshots on any goroutine, concurrently with the owner's reads and
// writes and with maintenance: it touches the frozen buffers, the Paimon
// tables and commit state only (the freeze reads the images of lists written
// unread, since only the owner reads the table). [Store.Release], on the
// owner before the next freeze, moves reads to the maintenance round's
// snapshots and drops the frozen buffers; after a failed commit or round they
// stay readable and the next freeze folds their rows in under the new ones, so
// they are written again (the newer row wins per key; rewriting a row is
// harmless under the deduplicate merge engine). Flush stays the synchronous
// path of every backend, refused while a frozen flush is held.
package subtask
