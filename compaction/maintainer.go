package compaction

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/internal/plant"
)

// Options configure a Maintainer.
type Options struct {
	Config Config
	// Notify receives *BackpressureChanged whenever the verdict changes.
	Notify *actor.PID
	// Every, when positive, kicks maintenance periodically even without
	// barriers, so expired files are dropped from an idle table.
	Every time.Duration
}

// Maintainer is the actor of one table's maintenance Session. Barrier rounds
// run inline, in the sync phase of the checkpoint; jobs run on the executor
// one at a time, and a barrier that arrives while one is out waits for it
// (one step) and then goes before any further job.
type Maintainer struct {
	sys     *actors.System
	t       Table
	opts    Options
	log     *slog.Logger
	s       *Session
	err     error // the session could not be created
	queue   []pendingBarrier
	timer   actors.Timer
	token   int
	stalled bool // the verdict last reported
	jobs    int  // jobs finished
	fence   *jobFence
	// The planted bug TwoCompactors: a second maintainer of the table.
	twin   *actor.PID
	second bool
}

type pendingBarrier struct {
	msg     *Barrier
	replyTo *actor.PID
	jobs    int // jobs finished when the barrier arrived
}

// NewMaintainer returns a producer of the maintenance actor of t, for
// System.Spawn. A restarted actor starts a fresh session, which re-seeds its
// view with one full walk.
func NewMaintainer(sys *actors.System, t Table, opts Options) actor.Producer {
	return func() actor.Actor {
		return &Maintainer{sys: sys, t: t, opts: opts, log: sys.Logger().With("actor", "compaction"),
			fence: &jobFence{jobs: opts.Config.Jobs}}
	}
}

// Receive implements actor.Actor.
func (m *Maintainer) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		now := m.sys.Clock().Now()
		// Commit identifiers grow across restarts because they start at
		// the clock (microseconds); the session also skips past its own
		// newest commit when it seeds.
		m.s, m.err = NewSession(m.t, m.opts.Config, now.UnixMicro())
		m.arm(ctx)
		if plant.On(plant.TwoCompactors) && !m.second {
			// As a second maintenance job would: its own commit user.
			opts := m.opts
			opts.Config.CommitUser = "second-" + DefaultCommitUser
			m.twin, _ = m.sys.SpawnChild(ctx, "twin", func() actor.Actor {
				return &Maintainer{sys: m.sys, t: m.t, opts: opts, log: m.log, second: true, fence: &jobFence{jobs: opts.Config.Jobs}}
			})
		}
	case *actor.Stopping, *actor.Restarting:
		if m.timer != nil {
			m.timer.Stop()
		}
		// A job still running reads files the session keeps open and
		// writes into the table: the session closes once it ended, and a
		// job that has not started yet never will.
		s := m.s
		m.fence.stop(func() {
			if s != nil {
				s.Close()
			}
		})
	case *Barrier:
		if m.twin != nil {
			ctx.Send(m.twin, msg)
		}
		m.queue = append(m.queue, pendingBarrier{msg: msg, replyTo: ctx.Sender(), jobs: m.jobs})
		m.drain(ctx)
	case *jobDone:
		if msg.fence != m.fence {
			return
		}
		m.jobs++
		if err := m.s.Finish(msg.result); err != nil {
			m.log.Warn("maintenance job failed", "err", err)
		}
		m.drain(ctx)
	case *Pin:
		if m.s != nil {
			m.s.Pin(msg.Checkpoint, msg.SnapshotID)
		}
	case *Unpin:
		if m.s != nil {
			m.s.Unpin(msg.Checkpoint, msg.UpTo)
		}
		m.drain(ctx)
	case *Kick:
		m.drain(ctx)
	case *tick:
		if msg.token == m.token {
			m.arm(ctx)
			m.drain(ctx)
		}
	}
}

// drain runs the waiting barrier rounds, then hands out the next job; both
// only while no job is out.
func (m *Maintainer) drain(ctx actor.Context) {
	if m.s == nil {
		for _, p := range m.queue {
			m.reply(ctx, p, &RoundDone{Checkpoint: p.msg.Checkpoint, Err: m.err})
		}
		m.queue = nil
		return
	}
	if m.s.Busy() {
		return
	}
	for len(m.queue) > 0 {
		p := m.queue[0]
		m.queue = m.queue[1:]
		done := m.round(p.msg)
		done.WaitedJobs = m.jobs - p.jobs
		m.reply(ctx, p, done)
	}
	now := m.sys.Clock().Now().UnixMilli()
	if j := m.s.NextJob(now); j != nil {
		fence := m.fence
		m.sys.Executor().Submit(ctx.Self(), func() any {
			var r *JobResult
			if !fence.run(func() { r = j.Run() }) {
				r = &JobResult{job: j, err: errMaintainerStopped}
			}
			return &jobDone{result: r, fence: fence}
		})
	}
	m.notify(ctx)
}

func (m *Maintainer) round(b *Barrier) *RoundDone {
	if plant.On(plant.SkipBarrierRound) {
		return &RoundDone{Checkpoint: b.Checkpoint, SnapshotID: b.SnapshotID, Stats: m.s.Stats()}
	}
	res, err := m.s.Barrier(b.SnapshotID, m.sys.Clock().Now().UnixMilli())
	done := &RoundDone{Checkpoint: b.Checkpoint, SnapshotID: res.SnapshotID, Committed: res.Committed,
		Backpressure: res.Backpressure, Stats: m.s.Stats(), Err: err}
	if err != nil {
		m.log.Error("barrier round failed", "checkpoint", b.Checkpoint, "snapshot", b.SnapshotID, "err", err)
		return done
	}
	m.s.Pin(b.Checkpoint, res.SnapshotID)
	return done
}

func (m *Maintainer) reply(ctx actor.Context, p pendingBarrier, done *RoundDone) {
	if p.replyTo != nil {
		ctx.Send(p.replyTo, done)
	}
}

func (m *Maintainer) notify(ctx actor.Context) {
	b := m.s.Backpressure()
	if b.Stalled == m.stalled {
		return
	}
	m.stalled = b.Stalled
	if m.opts.Notify != nil {
		ctx.Send(m.opts.Notify, &BackpressureChanged{Backpressure: b})
	}
}

func (m *Maintainer) arm(ctx actor.Context) {
	if m.opts.Every <= 0 {
		return
	}
	m.token++
	m.timer = m.sys.Clock().SendAfter(m.opts.Every, ctx.Self(), &tick{token: m.token})
}
