package listing

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
)

// List asks for the live files of a snapshot. Requests must not go back in
// time: a snapshot older than the previous listing's is an error.
type List struct {
	SnapshotID int64
}

// Trace implements actors.Traceable.
func (m *List) Trace() string { return fmt.Sprintf("snapshot=%d", m.SnapshotID) }

// Listed answers a List, to the request's sender.
type Listed struct {
	Files LiveFiles
	Cost  Cost
	Err   error
}

// Trace implements actors.Traceable.
func (m *Listed) Trace() string {
	return fmt.Sprintf("snapshot=%d data=%d index=%d full=%t deltas=%d err=%v",
		m.Files.SnapshotID, len(m.Files.Data), len(m.Files.Index), m.Cost.FullWalk, m.Cost.Deltas, m.Err != nil)
}

// Cost is the manifest I/O one listing did.
type Cost struct {
	FullWalk          bool // the whole manifest chain was walked
	Deltas            int  // delta manifest lists read
	IndexManifestRead bool
}

// listRead carries a finished read back from the executor.
type listRead struct {
	result readResult
	// stopped is the one of the lister that started the read: a restarted
	// lister ignores the reads of the instance it replaced.
	stopped *atomic.Bool
}

// errListerStopped: the lister stopped before the read started.
var errListerStopped = errors.New("listing: lister stopped before the read started")

type pendingList struct {
	req     *List
	replyTo *actor.PID
}

// Lister is the actor that keeps one table's LiveSet. One read runs at a
// time; requests arriving meanwhile wait in order, so each folds only what
// the previous one has not. A read that has not started when the lister
// stops never does: the table's directory may be on its way out (a job
// that failed over). A running one only reads, and its answer is dropped.
type Lister struct {
	exec    actors.Executor
	src     Source
	set     *LiveSet
	busy    bool
	waiting []pendingList
	stopped *atomic.Bool
}

// NewLister returns a producer of the lister of src, for System.Spawn.
func NewLister(sys *actors.System, src Source) actor.Producer {
	return func() actor.Actor {
		return &Lister{exec: sys.Executor(), src: src, set: NewLiveSet(src.BucketPath), stopped: new(atomic.Bool)}
	}
}

// Receive implements actor.Actor.
func (l *Lister) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Stopping, *actor.Restarting:
		l.stopped.Store(true)
	case *List:
		l.waiting = append(l.waiting, pendingList{req: m, replyTo: ctx.Sender()})
		l.next(ctx)
	case *listRead:
		if m.stopped != l.stopped {
			return
		}
		l.busy = false
		files, err := apply(l.set, m.result)
		l.reply(ctx, &Listed{Files: files, Cost: costOf(m.result), Err: err})
		l.next(ctx)
	}
}

// next starts the oldest waiting request, answering at once those that need
// no I/O.
func (l *Lister) next(ctx actor.Context) {
	for !l.busy && len(l.waiting) > 0 {
		p := l.waiting[0]
		plan, err := planRead(l.set, p.req.SnapshotID)
		switch {
		case err != nil:
			l.waiting = l.waiting[1:]
			l.send(ctx, p.replyTo, &Listed{Err: err})
		case !plan.seed && plan.from == plan.target:
			l.waiting = l.waiting[1:]
			l.send(ctx, p.replyTo, &Listed{Files: l.set.Files()})
		default:
			l.busy = true
			src, stopped := l.src, l.stopped
			l.exec.Submit(ctx.Self(), func() any {
				if stopped.Load() {
					return &listRead{result: readResult{plan: plan, err: errListerStopped}, stopped: stopped}
				}
				return &listRead{result: read(src, plan), stopped: stopped}
			})
		}
	}
}

func (l *Lister) reply(ctx actor.Context, m *Listed) {
	p := l.waiting[0]
	l.waiting = l.waiting[1:]
	l.send(ctx, p.replyTo, m)
}

func (l *Lister) send(ctx actor.Context, to *actor.PID, m *Listed) {
	if to != nil {
		ctx.Send(to, m)
	}
}

func costOf(r readResult) Cost {
	return Cost{FullWalk: r.seeded, Deltas: len(r.deltas), IndexManifestRead: r.indexRead && r.indexName != ""}
}
