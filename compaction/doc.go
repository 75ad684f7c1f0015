// Package compaction owns the maintenance of one table: the Session is the
// only code that commits COMPACT snapshots to it, so every compaction of the
// table is serialized through one mailbox.
//
// At each checkpoint barrier, after the store's data commit, the session runs
// the minimal round synchronously: the barrier's level-0 files move to a
// level >= 1 (upgraded in place, or rewritten when they carry deletes), each
// of their keys is looked up in the deeper levels and the row it supersedes
// is marked in the bucket's deletion vector, and the change is committed. A
// key is looked for only in the files whose in-memory key filter lets it
// pass (each bucket tree keeps one per file, made as compaction writes or
// reads the file whole, or on the file's first lookup after a restore), so
// the keys of append-only state, new everywhere, reach almost no file. The
// round reads what the barrier wrote, plus the deeper rows its keys hit, never
// the table: deletion-vector reads skip level 0, so a round that fails fails
// the checkpoint instead of leaving data invisible.
//
// Between barriers the session shapes the tree with universal compaction
// picks (size amplification, size ratio, run count), cut into steps that run
// on the executor one at a time, so a barrier waits for at most one step.
// A compaction that would take more steps than the rounds landing
// meanwhile find free levels for (at the pace shaping kept in the last
// interval) is cut into fewer, larger steps instead: with no level free, a
// round merges into level 1 in the sync phase, rewriting it whole round
// after round.
// A compaction whose runs all span the key space is cut by key range: each
// step rewrites one range of every run, and the rows it took stay behind
// in deletion vectors until a later step takes the rest of their file, so
// the tree is standalone-correct between steps and barrier rounds run
// between them.
// When universal compaction has nothing to do, shaping frees level 1, so
// that the next round is a pure upgrade rather than a merge; a round that
// finds level 1 occupied and a deeper level free moves the runs above it
// down itself, in its own commit. The session keeps one level per sorted
// run the table tolerates before it stalls (num-sorted-run.stop-trigger,
// past the schema's num-levels), so rounds that land while a long
// compaction runs upgrade into the levels above its inputs: what a round
// does depends on the tree, not on how far shaping got before the barrier.
// Shaping may add only a budget of new bytes per checkpoint interval, which
// keeps checkpoint uploads smooth. Rewrites drop rows past their TTL, and
// files whose rows have all expired are dropped whole.
//
// The session keeps the table's bucket trees across barriers: a full
// manifest walk seeds them once, and each later snapshot is folded in from
// its delta alone. Its own commits are applied in place.
//
// Snapshot expiration runs here too, never removing a file that an in-flight
// checkpoint pinned.
//
// [Session] is the state machine, unit-testable without actors; [Maintainer]
// is the actor that decodes messages and calls it.
package compaction
