package actors

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// SimOptions configure a simulation.
type SimOptions struct {
	// Options.Seed seeds the scheduler as well as System.Rand; ExecutorLimit is unused because
	// executor jobs run one at a time as steps.
	Options
	// Start is the virtual time when the simulation begins; zero means 2024-01-01T00:00:00Z.
	Start time.Time
	// TimerJumpChance is the probability, drawn at every step that has other work, of advancing
	// virtual time to the next timer anyway, so timers can fire while messages are in flight
	// (as on a slow machine). Zero advances time only when nothing else is runnable.
	TimerJumpChance float64
	// MaxSteps bounds each RunUntil, RunUntilIdle and RunFor call; zero means 10,000,000.
	MaxSteps int
	// Trace, if set, receives one line per step: the same facts the trace hash folds.
	Trace io.Writer
}

const defaultMaxSteps = 10_000_000

var defaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrIdle reports that a simulation has nothing left to run: no runnable step and no timer.
var ErrIdle = errors.New("actors: simulation is idle")

// ErrStepLimit reports that a run call reached SimOptions.MaxSteps.
var ErrStepLimit = errors.New("actors: simulation step limit reached")

// Sim is a deterministic simulated actor system. One goroutine, the one that called NewSim, owns
// it: every step runs on that goroutine inside Step or a Run call, and every call into the
// system (sends, spawns, timers, executor jobs) must come from it. A step is one message handled
// by one actor, one timer delivery or one executor job, chosen with a PRNG seeded by the seed.
type Sim struct {
	sys        *System
	opts       SimOptions
	rng        *rand.Rand
	guard      *ownerGuard
	dispatcher *simDispatcher
	clock      *virtualClock

	ready     []func()                // runnable steps; the next one is picked at random
	mailboxes map[string]*stepMailbox // live simulated actors by PID id
	current   *stepMailbox            // the actor whose message is being handled, if any
	steps     uint64
	trace     traceHash
	sinceScan int

	failed atomic.Bool // set with err; lets the driver check for failure without the lock
	errMu  sync.Mutex
	err    error
}

// NewSim builds a simulated system owned by the calling goroutine.
func NewSim(opts SimOptions) *Sim {
	if opts.Start.IsZero() {
		opts.Start = defaultStart
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = defaultMaxSteps
	}
	s := &Sim{
		opts:      opts,
		rng:       rand.New(rand.NewPCG(hashString("actors/scheduler"), opts.Seed)), // System.Rand streams put the seed first
		mailboxes: map[string]*stepMailbox{},
		trace:     newTraceHash(),
	}
	s.guard = newOwnerGuard(s.fail)
	s.dispatcher = &simDispatcher{sim: s}
	s.clock = &virtualClock{sim: s, start: opts.Start}
	s.sys = newSystem(opts.Options)
	s.sys.sim = s
	s.sys.clock = s.clock
	s.sys.executor = simExecutor{sim: s}
	return s
}

// System is the simulated actor system.
func (s *Sim) System() *System { return s.sys }

// Seed is the seed the simulation was built with.
func (s *Sim) Seed() uint64 { return s.opts.Seed }

// Now is the virtual time.
func (s *Sim) Now() time.Time { return s.clock.Now() }

// Steps is the number of steps run so far.
func (s *Sim) Steps() uint64 { return s.steps }

// TraceHash is a hash folded over every step so far (its kind, receiver, message type, the
// message's trace string if it is Traceable, and the virtual time). Two runs of one seed have
// equal trace hashes.
func (s *Sim) TraceHash() uint64 { return s.trace.sum }

// Err is the error that failed the simulation (a guard violation), if any.
func (s *Sim) Err() error {
	if !s.failed.Load() {
		return nil
	}
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// fail records the first error; every later run call returns it. It may be called from a
// foreign goroutine, which is why err has a lock.
func (s *Sim) fail(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
		s.failed.Store(true)
	}
}

// Step runs one step. It reports false when nothing is runnable and no timer is pending.
func (s *Sim) Step() (bool, error) {
	if err := s.guard.enter(); err != nil {
		return false, err
	}
	defer s.guard.exit()
	ran, err := s.step(noHorizon)
	if !ran && err == nil {
		err = s.scanForEscapes()
	}
	return ran, err
}

// Run runs up to n steps, fewer if the simulation goes idle, and returns how many ran.
func (s *Sim) Run(n int) (int, error) {
	if err := s.guard.enter(); err != nil {
		return 0, err
	}
	defer s.guard.exit()
	for i := range n {
		ran, err := s.step(noHorizon)
		if !ran {
			if err == nil {
				err = s.scanForEscapes()
			}
			return i, err
		}
		if err != nil {
			return i + 1, err
		}
	}
	return n, nil
}

// RunUntil runs steps until cond holds. cond is checked before every step. It fails if the
// simulation goes idle, reaches the step limit or fails first.
func (s *Sim) RunUntil(cond func() bool) error {
	if err := s.guard.enter(); err != nil {
		return err
	}
	defer s.guard.exit()
	for n := 0; !cond(); n++ {
		if n == s.opts.MaxSteps {
			return fmt.Errorf("condition not met after %d steps: %w", n, ErrStepLimit)
		}
		ran, err := s.step(noHorizon)
		if err != nil {
			return err
		}
		if !ran {
			if err := s.scanForEscapes(); err != nil {
				return err
			}
			return fmt.Errorf("condition not met after %d steps: %w", n, ErrIdle)
		}
	}
	return s.Err()
}

// RunUntilIdle runs steps, advancing virtual time through every timer, until nothing is left.
// A system with a periodic timer never goes idle; drive it with RunFor or RunUntil instead.
func (s *Sim) RunUntilIdle() error {
	if err := s.guard.enter(); err != nil {
		return err
	}
	defer s.guard.exit()
	return s.runUntilQuiet(noHorizon)
}

// RunFor runs steps and fires timers until virtual time has advanced by d and nothing due
// before then is left; timers later than that stay pending.
func (s *Sim) RunFor(d time.Duration) error {
	if err := s.guard.enter(); err != nil {
		return err
	}
	defer s.guard.exit()
	horizon := s.clock.now + max(d, 0)
	if err := s.runUntilQuiet(horizon); err != nil {
		return err
	}
	s.clock.now = horizon
	return nil
}

func (s *Sim) runUntilQuiet(horizon time.Duration) error {
	for n := 0; ; n++ {
		if n == s.opts.MaxSteps {
			return fmt.Errorf("still busy after %d steps: %w", n, ErrStepLimit)
		}
		ran, err := s.step(horizon)
		if err != nil {
			return err
		}
		if !ran {
			return s.scanForEscapes()
		}
	}
}

// noHorizon lets a step advance virtual time to any timer.
const noHorizon = time.Duration(-1)

// scanEvery is how many steps may pass between two scans of the process registry for actors
// that escaped the simulation.
const scanEvery = 1 << 16

// step picks and runs one runnable step. When nothing is runnable it advances virtual time to the
// next timer, but not beyond horizon (unless horizon is noHorizon).
func (s *Sim) step(horizon time.Duration) (bool, error) {
	if err := s.Err(); err != nil {
		return false, err
	}
	s.clock.releaseDue()
	if len(s.ready) > 0 && s.opts.TimerJumpChance > 0 && s.rng.Float64() < s.opts.TimerJumpChance {
		s.clock.advance(horizon)
	}
	if len(s.ready) == 0 && !s.clock.advance(horizon) {
		return false, nil
	}
	i := s.rng.IntN(len(s.ready))
	run := s.ready[i]
	last := len(s.ready) - 1
	s.ready[i], s.ready[last] = s.ready[last], nil
	s.ready = s.ready[:last]
	s.steps++
	run()
	if s.sinceScan++; s.sinceScan == scanEvery {
		if err := s.scanForEscapes(); err != nil {
			return true, err
		}
	}
	return true, s.Err()
}

// enqueue makes a step runnable.
func (s *Sim) enqueue(run func()) {
	s.ready = append(s.ready, run)
}
