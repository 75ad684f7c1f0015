// Package sim holds the deterministic simulation of the engine: simulated
// filesystems and blob stores whose faults (crashes, failing fsync, full
// disks, ambiguous timeouts) are drawn from a seed, and the workload that
// drives the real checkpoint actors through them, so that a seed fully
// determines a run. Nothing in the engine imports sim; the simulation wires
// its pieces in through the engine's injected interfaces.
//
// Run runs one seed. The workload is a keyed job on the simulated actor
// system: a source replaying a seeded stream from its checkpointed offset,
// keyed subtasks keeping value, list, map and time-ordered states (memory or
// paimon backend) and an exactly-once sink that stages output per checkpoint
// and commits it on completion, with barrier's Coordinator, Uploader and
// Store actors between them. Checkpoints are triggered at random times;
// faults come by seed: crashes of one subtask or the whole process (then
// a restore from the newest completed checkpoint, at the same or another
// parallelism), timeouts, declines, lost and late notifications, failed and
// ambiguous blob operations, fsync EIO and full disks. Then every fault
// heals and the job must finish.
//
// Checkers watch what passes between the actors (taps and relays in front of
// every Store actor and subscriber) and the blob store (a checking wrapper):
// the phase order of a checkpoint, reuse only of files of checkpoints
// confirmed to the store, no blob deleted while a readable metadata names it,
// no completed checkpoint lost by a recovery, one compactor per paimon table
// and its level invariants, every sink commit and every restored state equal
// to a failure-free model of the job, and at the end an orphan audit (every
// blob live or reported leaked, none after a restart's sweep, no chk-<n>/
// directory left) and a final restore at a fresh parallelism.
package sim
