package barrier

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/listing"
	"github.com/lakestate/lakestate/table"
)

// viewPin is the pin key of the snapshot a subtask reads between barriers.
// It lies above every checkpoint id, so an Unpin of checkpoints up to one
// never releases it; each barrier's release moves it to the previous
// checkpoint's round snapshot. nextViewPin holds that round snapshot from
// the round until the release: the checkpoint's own pin may go first.
const (
	viewPin     = math.MaxInt64
	nextViewPin = math.MaxInt64 - 1
)

// errMaintenanceGone: the maintainer or lister of a table stopped before
// answering; the agent spawned a new one.
var errMaintenanceGone = errors.New("maintenance actor of the table stopped before answering")

// Messages between a paimon store's Store actor and its table agents. The
// agent tags every answer with its table and checkpoint, which the
// maintenance actors' own answers lack.
type (
	agentRound struct {
		id       CheckpointID
		snapshot int64 // the store's data commit
	}
	agentList struct {
		id       CheckpointID
		snapshot int64 // the round's snapshot
	}
	// agentPinView moves the pin of the snapshot the subtask reads; with
	// next, the pin of the snapshot it will read after the next release
	// (0: none).
	agentPinView struct {
		snapshot int64
		next     bool
	}
	agentUnpin struct {
		id   CheckpointID
		upTo bool
	}
	tableRound struct {
		table string
		id    CheckpointID
		done  *compaction.RoundDone
	}
	tableListed struct {
		table  string
		id     CheckpointID
		listed *listing.Listed
	}
	tableBackpressure struct {
		table string
		b     compaction.Backpressure
	}
)

func (m *agentRound) Trace() string { return fmt.Sprintf("id=%d snapshot=%d", m.id, m.snapshot) }
func (m *agentList) Trace() string  { return fmt.Sprintf("id=%d snapshot=%d", m.id, m.snapshot) }
func (m *agentPinView) Trace() string {
	return fmt.Sprintf("snapshot=%d next=%t", m.snapshot, m.next)
}
func (m *agentUnpin) Trace() string { return fmt.Sprintf("id=%d upto=%t", m.id, m.upTo) }
func (m *tableRound) Trace() string {
	return fmt.Sprintf("table=%s id=%d snapshot=%d err=%v", m.table, m.id, m.done.SnapshotID, m.done.Err)
}
func (m *tableListed) Trace() string {
	return fmt.Sprintf("table=%s id=%d %s", m.table, m.id, m.listed.Trace())
}
func (m *tableBackpressure) Trace() string {
	return fmt.Sprintf("table=%s stalled=%t runs=%d", m.table, m.b.Stalled, m.b.SortedRuns)
}

// tableAgent stands between a Store actor and the maintenance of one paimon
// state table: it owns the table's Maintainer and Lister (its children),
// tags their answers with the table, and keeps the table's pins — the round
// snapshots of checkpoints in flight and the snapshot the subtask reads —
// so that a maintainer that restarted with none gets them back: the agent
// re-sends them to every new maintainer and before every barrier round. A
// child that stops is replaced at once; what it was asked and never
// answered is answered with errMaintenanceGone.
//
// A checkpoint's pin is released once, whatever comes first: its Unpin or
// its round's answer. The maintainer pins a round's snapshot as it runs
// the round, so an Unpin that overtook the round (an abort while the
// commit or the round was still out) is sent again after the answer, and
// the agent keeps no pin of its own for it.
type tableAgent struct {
	sys   *actors.System
	name  string
	tbl   *table.Table
	store *actor.PID
	opts  compaction.Options

	maint, lister *actor.PID
	spawned       int   // children spawned, for fresh names
	view, next    int64 // the snapshot the subtask reads, and will read after the next release
	pins          map[CheckpointID]int64
	rounds, lists []CheckpointID // requests the children have not answered, oldest first
	// Checkpoints already unpinned: every one up to unpinnedTo, and those
	// in unpinned (above it, and not older than the newest round asked
	// for, since a round of an older one never comes).
	unpinnedTo CheckpointID
	unpinned   map[CheckpointID]bool
	stopping   bool
}

func newTableAgent(sys *actors.System, name string, tbl *table.Table, store *actor.PID, opts compaction.Options) actor.Producer {
	return func() actor.Actor {
		return &tableAgent{sys: sys, name: name, tbl: tbl, store: store, opts: opts,
			pins: map[CheckpointID]int64{}, unpinned: map[CheckpointID]bool{}}
	}
}

func (a *tableAgent) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.spawnMaintainer(ctx)
		a.spawnLister(ctx)
	case *actor.Stopping:
		a.stopping = true
	case *actor.Terminated:
		a.terminated(ctx, m.Who)
	case *agentRound:
		a.sendPins(ctx)
		a.rounds = append(a.rounds, m.id)
		// The store asks for a checkpoint's rounds only once the previous
		// checkpoint's rounds answered.
		for id := range a.unpinned {
			if id < m.id {
				delete(a.unpinned, id)
			}
		}
		ctx.Request(a.maint, &compaction.Barrier{Checkpoint: int64(m.id), SnapshotID: m.snapshot})
	case *compaction.RoundDone:
		// A maintainer's answers carry no sender: one that a replaced
		// maintainer sent before it stopped arrives after its Terminated
		// (system messages go first), when its request was already
		// answered, and matches no outstanding request.
		if len(a.rounds) == 0 || CheckpointID(m.Checkpoint) != a.rounds[0] {
			return
		}
		id := a.rounds[0]
		a.rounds = a.rounds[1:]
		switch {
		case id <= a.unpinnedTo || a.unpinned[id]:
			delete(a.unpinned, id)
			if m.Err == nil {
				ctx.Send(a.maint, &compaction.Unpin{Checkpoint: int64(id)})
			}
		case m.Err == nil:
			a.pins[id] = m.SnapshotID
		}
		ctx.Send(a.store, &tableRound{table: a.name, id: id, done: m})
	case *agentList:
		a.lists = append(a.lists, m.id)
		ctx.Request(a.lister, &listing.List{SnapshotID: m.snapshot})
	case *listing.Listed:
		// As for rounds, an answer of a replaced lister may come late;
		// with a request outstanding it is taken for its answer, which the
		// store refuses unless it lists the snapshot asked for.
		if len(a.lists) == 0 {
			return
		}
		id := a.lists[0]
		a.lists = a.lists[1:]
		ctx.Send(a.store, &tableListed{table: a.name, id: id, listed: m})
	case *agentPinView:
		a.pinView(ctx, m)
	case *agentUnpin:
		a.unpin(m)
		ctx.Send(a.maint, &compaction.Unpin{Checkpoint: int64(m.id), UpTo: m.upTo})
	case *compaction.BackpressureChanged:
		ctx.Send(a.store, &tableBackpressure{table: a.name, b: m.Backpressure})
	}
}

// unpin drops the pins an Unpin releases and remembers it for a round that
// answers later.
func (a *tableAgent) unpin(m *agentUnpin) {
	for id := range a.pins {
		if id == m.id || (m.upTo && id < m.id) {
			delete(a.pins, id)
		}
	}
	switch {
	case m.upTo && m.id > a.unpinnedTo:
		a.unpinnedTo = m.id
		for id := range a.unpinned {
			if id <= m.id {
				delete(a.unpinned, id)
			}
		}
	case !m.upTo && m.id > a.unpinnedTo:
		a.unpinned[m.id] = true
	}
}

// pinView moves the read pin, or the next read pin; the next one goes once
// the reads are there.
func (a *tableAgent) pinView(ctx actor.Context, m *agentPinView) {
	if m.next {
		if a.next != 0 && m.snapshot == 0 {
			ctx.Send(a.maint, &compaction.Unpin{Checkpoint: nextViewPin})
		}
		a.next = m.snapshot
		if a.next != 0 {
			ctx.Send(a.maint, &compaction.Pin{Checkpoint: nextViewPin, SnapshotID: a.next})
		}
		return
	}
	a.view = m.snapshot
	ctx.Send(a.maint, &compaction.Pin{Checkpoint: viewPin, SnapshotID: m.snapshot})
	if a.next == m.snapshot {
		a.next = 0
		ctx.Send(a.maint, &compaction.Unpin{Checkpoint: nextViewPin})
	}
}

// sendPins gives the maintainer every pin the agent holds; pinning again
// is harmless, and a maintainer that restarted has none.
func (a *tableAgent) sendPins(ctx actor.Context) {
	if a.view != 0 {
		ctx.Send(a.maint, &compaction.Pin{Checkpoint: viewPin, SnapshotID: a.view})
	}
	if a.next != 0 {
		ctx.Send(a.maint, &compaction.Pin{Checkpoint: nextViewPin, SnapshotID: a.next})
	}
	for _, id := range slices.Sorted(maps.Keys(a.pins)) {
		ctx.Send(a.maint, &compaction.Pin{Checkpoint: int64(id), SnapshotID: a.pins[id]})
	}
}

func (a *tableAgent) terminated(ctx actor.Context, who *actor.PID) {
	if a.stopping {
		return
	}
	switch {
	case who.Equal(a.maint):
		a.sys.Logger().Warn("maintainer stopped; starting a new one", "table", a.name)
		for _, id := range a.rounds {
			ctx.Send(a.store, &tableRound{table: a.name, id: id, done: &compaction.RoundDone{Checkpoint: int64(id), Err: errMaintenanceGone}})
		}
		a.rounds = nil
		a.spawnMaintainer(ctx)
		a.sendPins(ctx)
	case who.Equal(a.lister):
		a.sys.Logger().Warn("lister stopped; starting a new one", "table", a.name)
		for _, id := range a.lists {
			ctx.Send(a.store, &tableListed{table: a.name, id: id, listed: &listing.Listed{Err: errMaintenanceGone}})
		}
		a.lists = nil
		a.spawnLister(ctx)
	}
}

// HandleFailure makes the agent the supervisor of its maintainer and
// lister: one that panicked is stopped, whatever restart budget the system
// has, so that its Terminated brings a replacement and errMaintenanceGone
// answers what it was asked. Restarted in place, it would drop those
// requests without a word (a barrier queued behind its job, a listing
// waiting for its read; their replaced instance's late results are
// ignored), and the agent would wait for their answers forever.
func (a *tableAgent) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	a.sys.Logger().Error("maintenance actor of a table panicked; it stops", "table", a.name, "actor", child.Id, "reason", reason)
	sup.StopChildren(child)
}

func (a *tableAgent) spawnMaintainer(ctx actor.Context) {
	opts := a.opts
	opts.Notify = ctx.Self()
	a.maint = a.spawn(ctx, "maint", compaction.NewMaintainer(a.sys, a.tbl, opts))
}

func (a *tableAgent) spawnLister(ctx actor.Context) {
	a.lister = a.spawn(ctx, "lister", listing.NewLister(a.sys, a.tbl))
}

func (a *tableAgent) spawn(ctx actor.Context, kind string, p actor.Producer) *actor.PID {
	a.spawned++
	pid, err := a.sys.SpawnChild(ctx, fmt.Sprintf("%s-%d", kind, a.spawned), p)
	if err != nil {
		// Names are fresh, so only a stopping system refuses; the agent
		// cannot work without its children.
		panic(fmt.Sprintf("barrier: spawn the %s of table %q: %v", kind, a.name, err))
	}
	return pid
}
