package compaction

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// A stopped fence refuses jobs; a stop while a job runs closes only once
// the job ended, and Jobs.Wait returns only then.
func TestJobFenceDefersCloseToRunningJob(t *testing.T) {
	jobs := &Jobs{}
	f := &jobFence{jobs: jobs}
	var closed bool
	ran := f.run(func() {
		f.stop(func() { closed = true })
		if closed {
			t.Error("the fence closed while its job ran")
		}
		if jobs.running != 1 {
			t.Errorf("%d jobs counted running, want 1", jobs.running)
		}
	})
	if !ran || !closed {
		t.Fatalf("ran %t, closed %t: want the job run and the close after it", ran, closed)
	}
	jobs.Wait()
	if f.run(func() { t.Error("a job ran after the stop") }) {
		t.Fatal("a job started after the stop")
	}
	f.stop(func() { t.Error("a second stop closed again") })

	idle := &jobFence{}
	closed = false
	idle.stop(func() { closed = true })
	if !closed {
		t.Fatal("a fence without a running job did not close at once")
	}
}

// A maintainer stopped while its shaping step writes a data file keeps its
// session open until the step ended, and Config.Jobs counts the step until
// then: once Wait returns, nothing of the maintenance writes into the table.
func TestMaintainerStopWaitsForRunningJob(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "8kb"})
	setup := e.session(Config{})
	for i, lo := range []int64{0, 150, 2000, 2150, 5000} {
		e.round(setup, puts(lo, lo+300, "v"+itoa(int64(i))), nil)
	}
	sys := actors.NewSystem(actors.Options{Seed: 1})
	defer sys.Close()
	store, err := actors.NewProbe(sys, "store")
	if err != nil {
		t.Fatal(err)
	}
	jobs := &Jobs{}
	pid, err := sys.Spawn("maintenance", NewMaintainer(sys, e.tbl, Options{Config: Config{StepBytes: 4 << 10, Jobs: jobs}}))
	if err != nil {
		t.Fatal(err)
	}
	store.Watch(pid)
	var waited, late atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	// The round seeds the view and moves the new level-0 file up without
	// rewriting it (its keys overlap nothing), so the first data file
	// written is the one of the shaping step that follows: it is held.
	sys.Request(pid, &Barrier{Checkpoint: 1, SnapshotID: e.commit(puts(9000, 9010, "a"), nil)}, store.PID())
	e.fio.setOnCreate(func(p string, w table.WritableFile) table.WritableFile {
		if !strings.Contains(p, "/bucket-") {
			return w
		}
		hold := false
		once.Do(func() { hold = true })
		if hold {
			close(entered)
			<-release
		}
		return &writesAfter{WritableFile: w, done: &waited, late: &late}
	})
	if done := expectRoundDone(t, store); done.Err != nil {
		t.Fatal(done.Err)
	}
	<-entered
	sys.Stop(pid)
	for {
		m, err := store.Next()
		if err != nil {
			close(release)
			t.Fatal(err)
		}
		if term, ok := m.(*actor.Terminated); ok && term.Who.Equal(pid) {
			break
		}
	}
	jobs.mu.Lock()
	running := jobs.running
	jobs.mu.Unlock()
	if running != 1 {
		close(release)
		t.Fatalf("%d jobs counted running after the maintainer stopped, its shaping step still writing", running)
	}
	gone := make(chan struct{})
	go func() {
		jobs.Wait()
		waited.Store(true)
		close(gone)
	}()
	close(release)
	<-gone
	if late.Load() {
		t.Fatal("the shaping step wrote into the table after Jobs.Wait returned")
	}
}

// writesAfter notes a write to its file once done is set.
type writesAfter struct {
	table.WritableFile
	done, late *atomic.Bool
}

func (w *writesAfter) Write(p []byte) (int, error) {
	w.note()
	return w.WritableFile.Write(p)
}

func (w *writesAfter) Sync() error {
	w.note()
	return w.WritableFile.Sync()
}

func (w *writesAfter) Close() error {
	w.note()
	return w.WritableFile.Close()
}

func (w *writesAfter) note() {
	if w.done.Load() {
		w.late.Store(true)
	}
}
