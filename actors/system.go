package actors

import (
	"errors"
	"log/slog"
	"math/rand/v2"

	"github.com/asynkron/protoactor-go/actor"
)

// Options configure a System.
type Options struct {
	// Seed seeds every random source of the system (see System.Rand); in a simulation it also
	// seeds the scheduler.
	Seed uint64
	// Logger receives the engine's and protoactor's logs; nil discards them.
	Logger *slog.Logger
	// MaxRestarts is how many times a panicking actor is restarted over its life before it is
	// stopped; zero stops it at its first panic.
	MaxRestarts int
	// ExecutorLimit bounds how many executor jobs run at once in the real system; zero means 8.
	// The simulation runs executor jobs one at a time as scheduler steps.
	ExecutorLimit int
}

// ErrForeignGoroutine reports a call into a simulated system from a goroutine other than the one
// that drives it. The call has no effect and the simulation fails.
var ErrForeignGoroutine = errors.New("actors: simulated system used from a foreign goroutine")

// System is an actor system, real or simulated. It is the only way to spawn actors, and it hands
// out the clock, the executor and random sources that actors use instead of time, goroutines
// and math/rand.
type System struct {
	actors   *actor.ActorSystem
	root     *actor.RootContext
	guarded  *actor.RootContext // root context whose spawns are supervised by strategy
	strategy actor.SupervisorStrategy
	clock    Clock
	executor Executor
	logger   *slog.Logger
	seed     uint64
	sim      *Sim // nil for the real system
}

func newSystem(opts Options) *System {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	protoLogger := logger.With("lib", "protoactor")
	as := actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return protoLogger }),
	)
	// The generated id is random; nothing may depend on it, so replace it with a constant.
	as.ID = "lakestate"
	strategy := supervisionStrategy(opts.MaxRestarts)
	return &System{
		actors:   as,
		root:     as.Root,
		guarded:  as.Root.Copy().WithGuardian(strategy),
		strategy: strategy,
		logger:   logger,
		seed:     opts.Seed,
	}
}

// Spawn starts a top-level actor named name (unique in the system). Its panics are handled by
// the system's supervision strategy.
func (s *System) Spawn(name string, producer actor.Producer) (*actor.PID, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit()
	return s.guarded.SpawnNamed(s.props(producer), name)
}

// SpawnChild starts an actor as a child of the actor whose context is parent; call it from the
// parent's Receive. The child's name is parent-id/name.
func (s *System) SpawnChild(parent actor.SpawnerContext, name string, producer actor.Producer) (*actor.PID, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit()
	return parent.SpawnNamed(s.props(producer), name)
}

// props is the only place Props are built: they carry the supervision strategy for the actor's
// children and, in a simulation, the simulated mailbox and dispatcher.
func (s *System) props(producer actor.Producer) *actor.Props {
	opts := []actor.PropsOption{actor.WithSupervisor(s.strategy)}
	if s.sim != nil {
		opts = append(opts, s.sim.propsOptions()...)
	}
	return actor.PropsFromProducer(producer, opts...)
}

// Send delivers msg to the actor at to, with no sender. Use it from outside actors (drivers,
// tests); inside an actor use ctx.Send.
func (s *System) Send(to *actor.PID, msg any) {
	if s.enter() != nil {
		return
	}
	defer s.exit()
	s.root.Send(to, msg)
}

// Request delivers msg to the actor at to with replyTo as its sender, so the receiver's
// ctx.Respond reaches replyTo (typically a Probe).
func (s *System) Request(to *actor.PID, msg any, replyTo *actor.PID) {
	if s.enter() != nil {
		return
	}
	defer s.exit()
	s.root.RequestWithCustomSender(to, msg, replyTo)
}

// Stop stops the actor at pid after its current message; messages still queued are discarded.
// Its watchers and parent receive *actor.Terminated.
func (s *System) Stop(pid *actor.PID) {
	if s.enter() != nil {
		return
	}
	defer s.exit()
	s.root.Stop(pid)
}

// Poison stops the actor at pid after it has handled the messages already queued.
func (s *System) Poison(pid *actor.PID) {
	if s.enter() != nil {
		return
	}
	defer s.exit()
	s.root.Poison(pid)
}

// Clock is the system's clock: wall-clock in the real system, virtual in a simulation.
func (s *System) Clock() Clock { return s.clock }

// Executor runs blocking work off the actors and posts results back as messages.
func (s *System) Executor() Executor { return s.executor }

// Logger is the system's logger.
func (s *System) Logger() *slog.Logger { return s.logger }

// Rand returns a new random source derived from the system seed and stream. Equal streams give
// equal sequences, so give each consumer its own stream name (an actor's PID id is a good one).
// The source is not safe for concurrent use; an actor owns the one it asked for.
func (s *System) Rand(stream string) *rand.Rand {
	return rand.New(rand.NewPCG(s.seed, hashString(stream)))
}

// Simulated reports whether the system is simulated, and returns the simulation if so.
func (s *System) Simulated() (*Sim, bool) { return s.sim, s.sim != nil }

// Close waits for running executor jobs of the real system and shuts it down. Actors are not
// stopped; stop them first if their Stopped handling matters.
func (s *System) Close() {
	if g, ok := s.executor.(*goroutineExecutor); ok {
		g.wait()
	}
	s.actors.Shutdown()
}

// enter marks the start of a call from outside the actors into the system. The real system
// accepts calls from any goroutine; a simulation only from the goroutine that drives it.
func (s *System) enter() error {
	if s.sim == nil {
		return nil
	}
	return s.sim.guard.enter()
}

func (s *System) exit() {
	if s.sim != nil {
		s.sim.guard.exit()
	}
}
