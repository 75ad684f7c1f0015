package sim

import (
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// On the real system a run's stores close through their fences: a keyed
// store whose paimon commit is still writing its data file when the run's
// actors are stopped closes only once the commit ends, and nothing writes
// into it after its close.
func TestRealReleaseWaitsForStoreJobs(t *testing.T) {
	e, hold := newHeldPaimonEnv(t)
	defer e.sys.Close()
	e.minAttempts = 6
	j, err := e.startJob(1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.entered: // the first checkpoint's commit writes its data file
	case <-time.After(realWait):
		t.Fatal("no commit wrote a data file of keyed/0")
	}
	e.stopActors(j.pids)
	kt := j.keyed[0]
	kt.backend = &closeNote{Backend: kt.backend, closed: hold.closed}
	j.release()
	if hold.closed.Load() {
		close(hold.release)
		t.Fatal("the store of keyed/0 was closed while its commit was writing into it")
	}
	close(hold.release)
	j.awaitReleased()
	if !hold.closed.Load() {
		t.Fatal("the store of keyed/0 was not closed")
	}
	if hold.late.Load() {
		t.Fatal("the commit wrote into its store after the store was closed")
	}
}

// holdFirstCreate holds the first Create of a matching path until release,
// and notes writes to that file after closed was set.
type holdFirstCreate struct {
	table.FileIO
	match            func(string) bool
	once             sync.Once
	entered, release chan struct{}
	closed, late     *atomic.Bool
}

func (h *holdFirstCreate) Create(p string) (table.WritableFile, error) {
	w, err := h.FileIO.Create(p)
	if err != nil || !h.match(p) {
		return w, err
	}
	held := false
	h.once.Do(func() { held = true })
	if !held {
		return w, nil
	}
	close(h.entered)
	<-h.release
	return &lateWrites{WritableFile: w, closed: h.closed, late: h.late}, nil
}

type lateWrites struct {
	table.WritableFile
	closed, late *atomic.Bool
}

func (w *lateWrites) Write(p []byte) (int, error) {
	w.note()
	return w.WritableFile.Write(p)
}

func (w *lateWrites) Sync() error {
	w.note()
	return w.WritableFile.Sync()
}

func (w *lateWrites) Close() error {
	w.note()
	return w.WritableFile.Close()
}

func (w *lateWrites) note() {
	if w.closed.Load() {
		w.late.Store(true)
	}
}

// closeNote notes its backend's close.
type closeNote struct {
	subtask.Backend
	closed *atomic.Bool
}

func (b *closeNote) Close() error {
	b.closed.Store(true)
	return b.Backend.Close()
}

// On the real system a run's tables are checked for their one compactor
// only once the run is released: every keyed store closed and no
// maintenance job running, so the check never reads a table a commit or a
// maintenance job is still writing (checkCompactors refuses to check
// earlier).
func TestRealCheckAfterRelease(t *testing.T) {
	e, written := newHeldPaimonEnv(t)
	defer e.sys.Close()
	close(written.release) // nothing is held: entered tells that a commit writes
	e.minAttempts = 6
	j, err := e.startJob(1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-written.entered:
	case <-time.After(realWait):
		t.Fatal("no commit wrote a data file of keyed/0")
	}
	e.crashJob(j)
	if err, _ := e.check.failed(); err != nil {
		t.Fatal(err)
	}
	if len(e.checkedSnapshots) == 0 {
		t.Fatal("the check read no table")
	}
}

// newHeldPaimonEnv is a real-system paimon environment of seed 5 whose
// stores hold the first data file of keyed-0's table in its creation until
// the returned hold is released.
func newHeldPaimonEnv(t *testing.T) (*env, *holdFirstCreate) {
	e := newEnv(Config{Seed: 5, Dir: t.TempDir(), Events: 120, Faults: []string{}, Backends: []string{barrier.BackendPaimon}}.withDefaults())
	e.sys = actors.NewSystem(actors.Options{Seed: e.cfg.Seed, ExecutorLimit: 4, Logger: slog.New(&logWatch{env: e})})
	e.check = newChecker(func() uint64 { return 0 })
	hold := &holdFirstCreate{FileIO: table.NewLocalFileIO(), match: func(p string) bool {
		return strings.Contains(p, "/keyed-0/") && strings.Contains(p, "/bucket-")
	}, entered: make(chan struct{}), release: make(chan struct{}), closed: new(atomic.Bool), late: new(atomic.Bool)}
	e.newStores(hold)
	e.root = e.cfg.Dir
	e.timeout = time.Minute
	return e, hold
}
