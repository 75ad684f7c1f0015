package actors

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
)

// ownerGuard keeps a simulation on one goroutine. Work may enter the simulation only from its
// owner, the goroutine that built it, and only while the owner is inside a call into the
// simulation (a run call, a send, a spawn...): every step and every post happens inside such a
// call. A post from anywhere else, such as an actor spawned with protoactor's goroutine
// dispatcher or a timer goroutine, would make the run depend on the Go scheduler.
//
// Checking the goroutine id on every post would cost microseconds (runtime.Stack), so the owner
// is checked that way only when a call starts from outside; inside it, where posts are frequent,
// the owner pins itself to its OS thread and a post compares thread identities.
type ownerGuard struct {
	owner  int64
	thread atomic.Int64 // the owner's thread identity while it is inside a call; 0 outside
	depth  int          // nesting of calls; only the owner touches it
	fail   func(error)
}

func newOwnerGuard(fail func(error)) *ownerGuard {
	return &ownerGuard{owner: goroutineID(), fail: fail}
}

// enter starts a call into the simulation.
func (g *ownerGuard) enter() error {
	if inside := g.thread.Load(); inside != 0 {
		if threadIdentity() != inside {
			return g.foreign("a call into the simulation")
		}
		g.depth++
		return nil
	}
	if goroutineID() != g.owner {
		return g.foreign("a call into the simulation")
	}
	pinThread()
	g.thread.Store(threadIdentity())
	g.depth = 1
	return nil
}

func (g *ownerGuard) exit() {
	g.depth--
	if g.depth == 0 {
		g.thread.Store(0)
		unpinThread()
	}
}

// checkPost reports whether work posted now comes from the owner inside a call; if not it fails
// the simulation and the work must be dropped.
func (g *ownerGuard) checkPost(what string) bool {
	inside := g.thread.Load()
	if inside != 0 && threadIdentity() == inside {
		return true
	}
	_ = g.foreign(what)
	return false
}

func (g *ownerGuard) foreign(what string) error {
	err := fmt.Errorf("%w: %s came from goroutine %d; the simulation is owned by goroutine %d and only accepts work while it is driving (an actor spawned without actors.System, a bare go statement, a wall-clock timer or a future with a timeout)",
		ErrForeignGoroutine, what, goroutineID(), g.owner)
	g.fail(err)
	return err
}

// goroutineID parses the current goroutine's id from its stack header ("goroutine 17 [...").
func goroutineID() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	b := bytes.TrimPrefix(buf[:n], []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("actors: cannot parse goroutine id from %q", buf[:n]))
	}
	return id
}
