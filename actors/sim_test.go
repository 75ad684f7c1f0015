package actors

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// ping and pong carry a round number into the trace.
type ping struct {
	from  *actor.PID
	round int
}

func (p ping) Trace() string { return fmt.Sprintf("%s#%d", p.from.Id, p.round) }

type pong struct{ round int }

func (p pong) Trace() string { return fmt.Sprintf("#%d", p.round) }

type done struct{ name string }

type wakeUp struct{ round int }

type saved struct{ round int }

// pinger plays rounds against a ponger; between rounds it waits on a timer of random length and
// runs an executor job, so a run mixes messages, timers and jobs.
type pinger struct {
	sys    *System
	ponger *actor.PID
	report *actor.PID
	rounds int
}

func (p *pinger) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		ctx.Send(p.ponger, ping{from: ctx.Self(), round: 0})
	case pong:
		if msg.round+1 == p.rounds {
			ctx.Send(p.report, done{name: ctx.Self().Id})
			return
		}
		delay := time.Duration(p.sys.Rand(ctx.Self().Id).IntN(1000)+msg.round) * time.Millisecond
		p.sys.Clock().SendAfter(delay, ctx.Self(), wakeUp{round: msg.round + 1})
	case wakeUp:
		p.sys.Executor().Submit(ctx.Self(), func() any { return saved{round: msg.round} })
	case saved:
		ctx.Send(p.ponger, ping{from: ctx.Self(), round: msg.round})
	}
}

type ponger struct{}

func (ponger) Receive(ctx actor.Context) {
	if msg, ok := ctx.Message().(ping); ok {
		ctx.Send(msg.from, pong{round: msg.round})
	}
}

// runPingPong runs a workload to completion and returns its trace hash, the order in which
// pingers finished and the trace text.
func runPingPong(t *testing.T, seed uint64) (uint64, string, string) {
	t.Helper()
	var trace strings.Builder
	sim := NewSim(SimOptions{Options: Options{Seed: seed}, Trace: &trace})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	pong := mustSpawn(t, sys, "ponger", func() actor.Actor { return ponger{} })
	const pingers = 5
	for i := range pingers {
		mustSpawn(t, sys, fmt.Sprintf("pinger-%d", i), func() actor.Actor {
			return &pinger{sys: sys, ponger: pong, report: probe.PID(), rounds: 4}
		})
	}
	var order []string
	for range pingers {
		msg, err := Expect[done](probe)
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, msg.name)
	}
	if err := sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	return sim.TraceHash(), strings.Join(order, ","), trace.String()
}

func TestSimSameSeedSameTrace(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h1, o1, trace1 := runPingPong(t, seed)
		h2, o2, trace2 := runPingPong(t, seed)
		if h1 != h2 || o1 != o2 || trace1 != trace2 {
			t.Fatalf("seed %d: runs differ: %x %s vs %x %s", seed, h1, o1, h2, o2)
		}
		if !strings.Contains(trace1, "actors.ping pinger-0#3") {
			t.Fatalf("trace lacks the Traceable detail of the last ping:\n%s", trace1)
		}
	}
}

func TestSimSeedsExploreInterleavings(t *testing.T) {
	hashes := map[uint64]bool{}
	const seeds = 12
	for seed := uint64(1); seed <= seeds; seed++ {
		h, _, _ := runPingPong(t, seed)
		hashes[h] = true
	}
	if len(hashes) < seeds-1 {
		t.Fatalf("%d seeds gave only %d distinct traces", seeds, len(hashes))
	}
}

// trickler sends one numbered message per step: each send is followed by a message to itself.
type trickler struct {
	name string
	sent int
}

func (tr *trickler) Receive(ctx actor.Context) {
	if msg, ok := ctx.Message().(burst); ok && tr.sent < msg.count {
		ctx.Send(msg.to, numbered{from: tr.name, n: tr.sent})
		tr.sent++
		ctx.Send(ctx.Self(), msg)
	}
}

func TestSimInterleavesMessageByMessage(t *testing.T) {
	// Two senders to one receiver, one message per step each: seeds disagree on the merge.
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 10; seed++ {
		sim := NewSim(SimOptions{Options: Options{Seed: seed}})
		sys := sim.System()
		probe := mustProbe(t, sys, "probe")
		sink := mustSpawn(t, sys, "sink", func() actor.Actor { return &relay{to: probe.PID()} })
		for _, name := range []string{"a", "b"} {
			pid := mustSpawn(t, sys, name, func() actor.Actor { return &trickler{name: name} })
			sys.Send(pid, burst{to: sink, count: 5})
		}
		if err := sim.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		var order strings.Builder
		next := map[string]int{}
		for _, m := range probe.Drain() {
			msg := m.(numbered)
			if msg.n != next[msg.from] {
				t.Fatalf("seed %d: from %s got %d, want %d", seed, msg.from, msg.n, next[msg.from])
			}
			next[msg.from]++
			order.WriteString(msg.from)
		}
		orders[order.String()] = true
	}
	if len(orders) < 5 {
		t.Fatalf("10 seeds gave only %d distinct merges: %v", len(orders), orders)
	}
}

// chain sends itself count messages one after another, then reports to a probe.
type chain struct {
	probe *actor.PID
	count int
}

type link struct{ n int }

func (c *chain) Receive(ctx actor.Context) {
	if msg, ok := ctx.Message().(link); ok {
		if msg.n == c.count {
			ctx.Send(c.probe, "chain done")
			return
		}
		ctx.Send(ctx.Self(), link{n: msg.n + 1})
	}
}

func TestSimVirtualTimeJumpsWhenIdle(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	start := sim.Now()
	probe := mustProbe(t, sys, "probe")
	sys.Clock().SendAfter(2*time.Hour, probe.PID(), tick{n: 2})
	sys.Clock().SendAfter(time.Hour, probe.PID(), tick{n: 1})
	stopped := sys.Clock().SendAfter(30*time.Minute, probe.PID(), tick{n: 0})
	if !stopped.Stop() {
		t.Fatal("could not stop a pending timer")
	}

	if err := sim.RunFor(90 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := sim.Now().Sub(start); got != 90*time.Minute {
		t.Fatalf("RunFor(90m) left virtual time at +%v", got)
	}
	if got := probe.Drain(); len(got) != 1 || got[0] != (tick{n: 1}) {
		t.Fatalf("after 90m got %v, want only the 1h tick", got)
	}

	if err := sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if got := sim.Now().Sub(start); got != 2*time.Hour {
		t.Fatalf("idle at +%v, want +2h (the last timer)", got)
	}
	if got := probe.Drain(); len(got) != 1 || got[0] != (tick{n: 2}) {
		t.Fatalf("after idle got %v, want the 2h tick", got)
	}
}

func TestSimTimeAdvancesOnlyWhenNothingIsRunnable(t *testing.T) {
	for _, jump := range []float64{0, 1} {
		sim := NewSim(SimOptions{Options: Options{Seed: 3}, TimerJumpChance: jump})
		sys := sim.System()
		probe := mustProbe(t, sys, "probe")
		pid := mustSpawn(t, sys, "chain", func() actor.Actor { return &chain{probe: probe.PID(), count: 50} })
		sys.Clock().SendAfter(time.Nanosecond, probe.PID(), "timer")
		sys.Send(pid, link{n: 0})
		if err := sim.RunUntilIdle(); err != nil {
			t.Fatal(err)
		}
		got := probe.Drain()
		timerFirst := len(got) == 2 && got[0] == "timer"
		if jump == 0 && timerFirst {
			t.Fatal("a 1ns timer fired while the chain still had runnable messages")
		}
		if jump == 1 && !timerFirst {
			t.Fatalf("with TimerJumpChance 1 the timer waited for the chain: %v", got)
		}
	}
}

func TestSimExecutorRunsJobsAsSteps(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	driver := goroutineID()
	var ranOn int64
	sys.Executor().Submit(probe.PID(), func() any { ranOn = goroutineID(); return jobDone{id: 7} })
	if probe.Len() != 0 || ranOn != 0 {
		t.Fatal("Submit ran the job before the simulation was driven")
	}
	got, err := Expect[jobDone](probe)
	if err != nil {
		t.Fatal(err)
	}
	if got.id != 7 || ranOn != driver {
		t.Fatalf("got %v, job ran on goroutine %d, want job 7 on the driver %d", got, ranOn, driver)
	}
}

func TestSimSupervisionAndRequest(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 5, MaxRestarts: 1}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	pid := mustSpawn(t, sys, "fragile", func() actor.Actor { return &fragile{probe: probe.PID()} })
	probe.Watch(pid)
	sys.Send(pid, boom{})
	sys.Send(pid, boom{})
	if err := sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	// Terminated is a system message and may overtake the restarted actor's "started".
	var started, terminated int
	for _, m := range probe.Drain() {
		switch m := m.(type) {
		case string:
			started++
		case *actor.Terminated:
			if m.Who.Equal(pid) {
				terminated++
			}
		}
	}
	if started != 2 || terminated != 1 {
		t.Fatalf("started %d times, terminated %d times; want a start, one restart, then a stop", started, terminated)
	}

	echoPID := mustSpawn(t, sys, "echo", func() actor.Actor { return echo{} })
	sys.Request(echoPID, "x", probe.PID())
	if msg, err := Expect[string](probe); err != nil || msg != "echo x" {
		t.Fatalf("got %q, %v", msg, err)
	}
}

func TestSimProbeNextFailsWhenIdle(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	probe := mustProbe(t, sim.System(), "probe")
	if _, err := probe.Next(); !errors.Is(err, ErrIdle) {
		t.Fatalf("got %v, want ErrIdle", err)
	}
}

// spawner spawns a child with the Props it is given when told to.
type spawner struct {
	child func(ctx actor.Context) error
	probe *actor.PID
}

type spawnNow struct{}

func (s *spawner) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(spawnNow); ok {
		if err := s.child(ctx); err != nil {
			ctx.Send(s.probe, err.Error())
		}
	}
}

func TestSimGuardCatchesChildSpawnedWithPlainProps(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	pid := mustSpawn(t, sys, "parent", func() actor.Actor {
		return &spawner{child: func(ctx actor.Context) error {
			_, err := ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "plain")
			return err
		}}
	})
	sys.Send(pid, spawnNow{})
	err := sim.RunUntilIdle()
	if !errors.Is(err, ErrEscapedActor) || !strings.Contains(err.Error(), "parent/plain") {
		t.Fatalf("got %v, want ErrEscapedActor naming parent/plain", err)
	}
}

func TestSimGuardCatchesRootActorSpawnedWithPlainProps(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	pid := mustSpawn(t, sys, "parent", func() actor.Actor {
		return &spawner{child: func(ctx actor.Context) error {
			_, err := ctx.ActorSystem().Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "rogue")
			return err
		}}
	})
	sys.Send(pid, spawnNow{})
	err := sim.RunUntilIdle()
	if !errors.Is(err, ErrEscapedActor) || !strings.Contains(err.Error(), "rogue") {
		t.Fatalf("got %v, want ErrEscapedActor naming rogue", err)
	}
}

// sendsFromGoroutine sends to a target from a fresh goroutine while handling a message, and
// waits for that goroutine, so the foreign send happens while the simulation is driving.
type sendsFromGoroutine struct {
	sys    *System
	target *actor.PID
}

func (a *sendsFromGoroutine) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(spawnNow); ok {
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			a.sys.Send(a.target, "from elsewhere")
		}()
		<-sent
	}
}

func TestSimGuardCatchesSendFromForeignGoroutineWhileRunning(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	pid := mustSpawn(t, sys, "sender", func() actor.Actor { return &sendsFromGoroutine{sys: sys, target: probe.PID()} })
	sys.Send(pid, spawnNow{})
	err := sim.RunUntilIdle()
	if !errors.Is(err, ErrForeignGoroutine) {
		t.Fatalf("got %v, want ErrForeignGoroutine", err)
	}
	if probe.Len() != 0 {
		t.Fatalf("the foreign send was delivered: %v", probe.Drain())
	}
}

func TestSimGuardCatchesPostFromPlainActorGoroutine(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	posted := make(chan struct{})
	// A plain protoactor actor runs on its own goroutine; its reply to a simulated actor is a
	// post from a foreign goroutine, which arrives whenever the Go scheduler says.
	plain := sys.actors.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if _, ok := ctx.Message().(string); ok {
			ctx.Send(probe.PID(), "reply")
			close(posted)
		}
	}))
	sys.actors.Root.Send(plain, "hello")
	<-posted
	if err := sim.RunUntilIdle(); !errors.Is(err, ErrForeignGoroutine) {
		t.Fatalf("got %v, want ErrForeignGoroutine", err)
	}
}

func TestSimGuardCatchesCallFromForeignGoroutineBetweenRuns(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 1}})
	sys := sim.System()
	errs := make(chan error, 1)
	go func() {
		_, err := sys.Spawn("elsewhere", func() actor.Actor { return echo{} })
		errs <- err
	}()
	if err := <-errs; !errors.Is(err, ErrForeignGoroutine) {
		t.Fatalf("spawn from a foreign goroutine: got %v", err)
	}
	if err := sim.RunUntilIdle(); !errors.Is(err, ErrForeignGoroutine) {
		t.Fatalf("the run did not fail: %v", err)
	}
}

// supervisor spawns one worker child and forwards Terminated notices to a probe.
type supervisor struct {
	sys   *System
	probe *actor.PID
}

func (s *supervisor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		if _, err := s.sys.SpawnChild(ctx, "worker", func() actor.Actor { return &chain{probe: s.probe, count: 1000} }); err != nil {
			panic(err)
		}
	case *actor.Terminated:
		ctx.Send(s.probe, msg)
	}
}

// arm asks an armer to set a timer and submit an executor job, both for the probe.
type arm struct{}

// armer relays numbered messages to a probe and, on arm, sets up work that will reach the probe
// later: a timer and an executor job.
type armer struct {
	sys   *System
	probe *actor.PID
	armed *bool
}

func (a *armer) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case numbered:
		ctx.Send(a.probe, msg)
	case arm:
		a.sys.Clock().SendAfter(time.Minute, a.probe, numbered{from: "armer timer"})
		a.sys.Executor().Submit(a.probe, func() any { return numbered{from: "armer job"} })
		*a.armed = true
	}
}

func TestSimCrashDropsPendingMessagesTimersAndJobs(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash-%v", crash), func(t *testing.T) {
			sim := NewSim(SimOptions{Options: Options{Seed: 9}})
			sys := sim.System()
			probe := mustProbe(t, sys, "probe")
			watcher := mustProbe(t, sys, "watcher")
			parent := mustSpawn(t, sys, "parent", func() actor.Actor { return &supervisor{sys: sys, probe: probe.PID()} })
			armed := false
			victim := mustSpawn(t, sys, "victim", func() actor.Actor { return &armer{sys: sys, probe: probe.PID(), armed: &armed} })
			watcher.Watch(victim)
			if err := sim.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			sys.Send(victim, arm{})
			// Stop right after the victim armed, before its job or timer can run.
			if err := sim.RunUntil(func() bool { return armed }); err != nil {
				t.Fatal(err)
			}
			worker := actor.NewPID(parent.Address, parent.Id+"/worker")

			// Pending now: the victim's timer and job for the probe, plus messages, a timer
			// and a job aimed at the victim and messages for the parent's worker.
			for i := range 5 {
				sys.Send(victim, numbered{from: "queued", n: i})
			}
			sys.Send(worker, link{n: 0})
			sys.Clock().SendAfter(time.Second, victim, numbered{from: "timer for victim"})
			jobForVictimRan := false
			sys.Executor().Submit(victim, func() any { jobForVictimRan = true; return numbered{from: "job for victim"} })
			// A job the driver submits for a surviving actor runs either way.
			sys.Executor().Submit(probe.PID(), func() any { return jobDone{id: 1} })

			if crash {
				if n := sim.Crash(victim, parent); n != 3 {
					t.Fatalf("crashed %d actors, want victim, parent and its worker", n)
				}
			}
			if err := sim.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, m := range probe.Drain() {
				switch m := m.(type) {
				case numbered:
					got[m.from]++
				case string:
					got[m]++
				default:
					got[fmt.Sprintf("%T", m)]++
				}
			}
			want := map[string]int{"actors.jobDone": 1}
			if !crash {
				want = map[string]int{"actors.jobDone": 1, "armer timer": 1, "armer job": 1, "queued": 5,
					"timer for victim": 1, "job for victim": 1, "chain done": 1}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("probe got %v, want %v", got, want)
			}
			if jobForVictimRan != !crash {
				t.Fatalf("job aimed at the victim ran: %v", jobForVictimRan)
			}
			if !crash {
				return
			}
			term, err := Expect[*actor.Terminated](watcher)
			if err != nil {
				t.Fatal(err)
			}
			if !term.Who.Equal(victim) || term.Why != actor.TerminatedReason_AddressTerminated {
				t.Fatalf("watcher got %v, want victim terminated by a crash", term)
			}

			// The names are free again: a restarted process reuses them.
			if _, err := sys.Spawn("victim", func() actor.Actor { return &armer{sys: sys, probe: probe.PID(), armed: &armed} }); err != nil {
				t.Fatal(err)
			}
			sys.Send(victim, numbered{from: "after restart"})
			if msg, err := Expect[numbered](probe); err != nil || msg.from != "after restart" {
				t.Fatalf("got %v, %v", msg, err)
			}
		})
	}
}

func TestSimCrashNotifiesParentOutsideTheGroup(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 2}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	parent := mustSpawn(t, sys, "parent", func() actor.Actor { return &supervisor{sys: sys, probe: probe.PID()} })
	if err := sim.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	worker := actor.NewPID(parent.Address, parent.Id+"/worker")
	if n := sim.Crash(worker); n != 1 {
		t.Fatalf("crashed %d actors, want 1", n)
	}
	term, err := Expect[*actor.Terminated](probe)
	if err != nil {
		t.Fatal(err)
	}
	if !term.Who.Equal(worker) {
		t.Fatalf("parent was told about %v, want %v", term.Who, worker)
	}
}

func TestSimRunAndStepCountSteps(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 4}})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	pid := mustSpawn(t, sys, "chain", func() actor.Actor { return &chain{probe: probe.PID(), count: 10} })
	sys.Send(pid, link{n: 0})
	ran, err := sim.Run(3)
	if err != nil || ran != 3 || sim.Steps() != 3 {
		t.Fatalf("Run(3) ran %d steps (total %d), err %v", ran, sim.Steps(), err)
	}
	ran, err = sim.Run(1000)
	if err != nil || ran >= 1000 || probe.Len() != 1 {
		t.Fatalf("Run(1000) ran %d steps, probe has %d messages, err %v; want it to stop when idle", ran, probe.Len(), err)
	}
	if ok, err := sim.Step(); ok || err != nil {
		t.Fatalf("Step on an idle simulation: %v, %v", ok, err)
	}
}

func TestSimStepLimit(t *testing.T) {
	sim := NewSim(SimOptions{Options: Options{Seed: 4}, MaxSteps: 20})
	sys := sim.System()
	probe := mustProbe(t, sys, "probe")
	pid := mustSpawn(t, sys, "chain", func() actor.Actor { return &chain{probe: probe.PID(), count: 100} })
	sys.Send(pid, link{n: 0})
	if err := sim.RunUntilIdle(); !errors.Is(err, ErrStepLimit) {
		t.Fatalf("got %v, want ErrStepLimit", err)
	}
}
