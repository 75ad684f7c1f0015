// Package sim holds the deterministic simulation of the engine: simulated
// filesystems and blob stores whose faults (crashes, failing fsync, full
// disks, ambiguous timeouts) are drawn from a seed, so that a seed fully
// determines a run. Nothing in the engine imports sim; the simulation wires
// its pieces in through the engine's injected interfaces.
package sim
