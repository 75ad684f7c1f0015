package compaction

import (
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// restartSupervisor spawns a maintainer as its child and restarts it on
// request, as its supervisor does after a panic: the restarted maintainer is
// a new instance with the same PID and mailbox.
type restartSupervisor struct {
	sys   *actors.System
	make  actor.Producer
	probe *actor.PID
	child *actor.PID
}

type (
	restartChild struct{}
	// forwardBarrier sends b to the maintainer, with the probe as sender.
	forwardBarrier struct{ b *Barrier }
	childSpawned   struct{ pid *actor.PID }
	supervised     struct{}
	marker         struct{}
)

func (s *restartSupervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.child, _ = s.sys.SpawnChild(ctx, "maintenance", s.make)
		s.sys.Send(s.probe, &childSpawned{pid: s.child})
	case *restartChild:
		ctx.(actor.Supervisor).RestartChildren(s.child)
		s.sys.Send(s.probe, &supervised{})
	case *forwardBarrier:
		s.sys.Request(s.child, m.b, s.probe)
	}
}

// handleFIO counts the closes of every file it opened.
type handleFIO struct {
	table.FileIO
	mu    sync.Mutex
	files []*trackedFile
}

type trackedFile struct {
	table.ReadableFile
	path   string
	closes atomic.Int32
	// readClosed: a read after the close (the closed file's descriptor
	// may be another file's by then).
	readClosed atomic.Bool
}

func (f *trackedFile) ReadAt(b []byte, off int64) (int, error) {
	if f.closes.Load() > 0 {
		f.readClosed.Store(true)
	}
	return f.ReadableFile.ReadAt(b, off)
}

func (h *handleFIO) Open(p string) (table.ReadableFile, error) {
	f, err := h.FileIO.Open(p)
	if err != nil {
		return nil, err
	}
	tf := &trackedFile{ReadableFile: f, path: p}
	h.mu.Lock()
	h.files = append(h.files, tf)
	h.mu.Unlock()
	return tf, nil
}

func (f *trackedFile) Close() error {
	f.closes.Add(1)
	return f.ReadableFile.Close()
}

// A maintainer restarted while its shaping step runs: the replaced
// instance's session closes once that step ended (its file cache is what
// the step reads), the new instance ignores the step's result when it
// arrives (its own session handed out no job, and would fail on a result it
// did not hand out), and once the maintainer stops and Jobs.Wait returned,
// every file either session opened is closed exactly once, and none is
// read after its close. One executor
// slot: a job queued after the step runs once the step's result is in the
// maintainer's mailbox.
func TestRestartedMaintainerIgnoresStaleJob(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "8kb"})
	setup := e.session(Config{})
	for i, lo := range []int64{0, 150, 2000, 2150, 5000} {
		e.round(setup, puts(lo, lo+300, "v"+itoa(int64(i))), nil)
	}
	fio := &handleFIO{FileIO: e.fio}
	tbl, err := table.Open(fio, e.dir, table.WithRand(rand.NewChaCha8([32]byte{3})))
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(actors.Options{Seed: 1, ExecutorLimit: 1})
	defer sys.Close()
	p, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	jobs := &Jobs{}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	// The round moves the new level-0 file up without rewriting it, so the
	// first data file written is the one of the shaping step that
	// follows: it is held.
	e.fio.setOnCreate(func(p string, w table.WritableFile) table.WritableFile {
		if strings.Contains(p, "/bucket-") {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
		return w
	})
	sup, err := sys.Spawn("supervisor", func() actor.Actor {
		return &restartSupervisor{sys: sys, probe: p.PID(),
			make: NewMaintainer(sys, tbl, Options{Config: Config{StepBytes: 4 << 10, CheckInvariants: true, Jobs: jobs}})}
	})
	if err != nil {
		t.Fatal(err)
	}
	spawned, err := actors.Expect[*childSpawned](p)
	if err != nil {
		t.Fatal(err)
	}
	p.Watch(spawned.pid)
	sys.Send(sup, &forwardBarrier{b: &Barrier{Checkpoint: 1, SnapshotID: e.commit(puts(9000, 9010, "a"), nil)}})
	if done := expectRoundDone(t, p); done.Err != nil {
		t.Fatal(done.Err)
	}
	<-entered
	sys.Send(sup, &restartChild{})
	if _, err := actors.Expect[*supervised](p); err != nil {
		close(release)
		t.Fatal(err)
	}
	sys.Executor().Submit(p.PID(), func() any { return &marker{} })
	close(release)
	await(t, p, spawned.pid, func(m any) bool { _, ok := m.(*marker); return ok })
	// The step's result is in the mailbox before this barrier.
	sys.Send(sup, &forwardBarrier{b: &Barrier{Checkpoint: 2, SnapshotID: e.commit(puts(9100, 9110, "b"), nil)}})
	var done *RoundDone
	await(t, p, spawned.pid, func(m any) bool { done, _ = m.(*RoundDone); return done != nil })
	if done.Err != nil {
		t.Fatalf("the restarted maintainer's round: %v", done.Err)
	}
	sys.Stop(sup)
	await(t, p, spawned.pid, func(m any) bool {
		term, ok := m.(*actor.Terminated)
		return ok && term.Who.Equal(spawned.pid)
	})
	jobs.Wait()
	fio.mu.Lock()
	defer fio.mu.Unlock()
	if len(fio.files) == 0 {
		t.Fatal("the maintainers opened no file")
	}
	for _, f := range fio.files {
		if n := f.closes.Load(); n != 1 {
			t.Errorf("%s closed %d times once both sessions closed, want once", f.path, n)
		}
		if f.readClosed.Load() {
			t.Errorf("%s read after its close", f.path)
		}
	}
}

// await takes the probe's messages until want accepts one; the maintainer
// terminating first fails the test.
func await(t *testing.T, p *actors.Probe, maint *actor.PID, want func(any) bool) {
	t.Helper()
	for {
		m, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want(m) {
			return
		}
		if term, ok := m.(*actor.Terminated); ok && term.Who.Equal(maint) {
			t.Fatal("the maintainer terminated: it failed on a message")
		}
	}
}
