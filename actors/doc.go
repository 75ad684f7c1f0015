// Package actors owns the actor plumbing every other package builds on: constructing an actor
// system (real or simulated), spawning actors, the injected clock, the executor for blocking
// I/O, per-stream random sources and the probe that lets tests wait for messages.
//
// # One way to spawn
//
// Every actor is spawned through a [System]: [System.Spawn] for top-level actors and
// [System.SpawnChild] from inside a parent's Receive. The System attaches the dispatcher, the
// mailbox and the supervision strategy of the system in use. An actor spawned with plain
// protoactor Props would run on real goroutines and silently escape a simulation; the simulated
// system detects such actors and fails the run.
//
// # Messages
//
// Messages are plain Go structs (usually sent by pointer) and are immutable once sent: the sender
// must not touch a message, or anything it references, after Send. A request that expects an
// answer either uses Request (the receiver answers with ctx.Respond) or carries the PID to
// answer to in a field. There are no futures: Future.Result blocks the only goroutine of a
// simulation, and futures with timeouts fire from wall-clock goroutines.
//
// A message that implements [Traceable] contributes its trace string to the simulation's trace
// hash, so two runs of one seed compare message contents and not just message types.
//
// # Actors
//
// An actor's Receive decodes the message and calls plain methods of a state machine that holds
// no actor types and does no I/O, so the logic is unit-testable without actors (the shape of etcd
// raft). Inside an actor there is no time.Now, time.After or time.Sleep (use the [Clock]), no
// global math/rand (use [System.Rand]), no os file calls, no go statements and no blocking I/O:
// blocking work is handed to the [Executor], which posts its result back as a message.
//
// Timers are messages: [Clock.SendAfter] delivers a message to a PID after a delay and returns a
// [Timer] to cancel it. A cancelled timer may still have been delivered (Stop reports which), so
// timer messages carry a token the actor checks against its current state.
//
// # Supervision
//
// A panicking Receive drops the message that caused it (protoactor never redelivers). Supervision
// is decided by counting only, never by a wall-clock window: with [Options.MaxRestarts] zero a
// panicking actor stops; otherwise it restarts with fresh state from its producer up to that
// many times over its life and then stops. An actor that must not lose work on a panic has to
// fail the work explicitly.
//
// # Simulation
//
// [NewSim] builds a System whose every step (one message to one actor, one timer firing or one
// executor job) is chosen by a seeded PRNG on the goroutine that drives it, with a virtual clock
// that advances only when nothing else is runnable. The same seed gives the same sequence of
// steps and the same [Sim.TraceHash]. [Sim.Crash] drops a group of actors together with their
// pending messages, timers and executor jobs, as a process crash would.
package actors
