// Package faultfs is an in-memory table.FileIO whose faults come from a
// seeded *rand.Rand.
//
// Every file has volatile content (what reads see) and durable content (what
// survives a crash). Sync makes a file's content durable; a name (created,
// renamed, linked, published or removed) becomes durable only when its
// directory is synced with SyncDir. Crash forgets every name that is not
// durable and decides each unsynced write by the seed: dropped, kept, or torn
// (a prefix kept). Dropped bytes before a kept write read back as zeros, the
// way a filesystem with delayed allocation exposes them.
//
// Directories that Create or Link make are durable at once, as the local
// FileIO syncs the parent of every directory it makes.
//
// Faults stay inside what the engine claims to survive: a failed fsync
// returns EIO and leaves the file's writes unsynced, and every later Sync
// of that handle fails too, so a caller can never believe a file durable
// after an fsync error. A write past the capacity writes what fits and
// returns ENOSPC.
package faultfs
