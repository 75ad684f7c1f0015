package actors

// NewSystem builds a real actor system: protoactor's goroutine dispatcher and mailboxes, the wall
// clock and a goroutine executor bounded by opts.ExecutorLimit.
func NewSystem(opts Options) *System {
	s := newSystem(opts)
	s.clock = wallClock{root: s.root}
	s.executor = newGoroutineExecutor(s.root, opts.ExecutorLimit)
	return s
}
