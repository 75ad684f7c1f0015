package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// countedBackend is the memory backend with every store's closes counted.
type countedBackend struct {
	memoryBackend
	// opened, when set, sees each store the run opens, on the executor.
	opened func(n int)
	mu     sync.Mutex
	stores []*countedStore
}

type countedStore struct {
	subtask.Backend
	closes atomic.Int32
}

func (s *countedStore) Close() error {
	s.closes.Add(1)
	return s.Backend.Close()
}

func (b *countedBackend) open(d taskDirs) (subtask.Backend, error) {
	inner, err := b.memoryBackend.open(d)
	if err != nil {
		return nil, err
	}
	s := &countedStore{Backend: inner}
	b.mu.Lock()
	b.stores = append(b.stores, s)
	n := len(b.stores)
	b.mu.Unlock()
	if b.opened != nil {
		b.opened(n)
	}
	return s, nil
}

// closedOnce fails unless the backend opened want stores and each was
// closed exactly once.
func (b *countedBackend) closedOnce(t *testing.T, want int) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.stores) != want {
		t.Fatalf("%d stores opened, want %d", len(b.stores), want)
	}
	for i, s := range b.stores {
		if n := s.closes.Load(); n != 1 {
			t.Fatalf("store %d closed %d times after the run stopped, want once", i, n)
		}
	}
}

// keyedGraph is a source of three keys, a keyed operator made by newOp and a
// sink.
func keyedGraph(newOp func() Operator) *Graph {
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	src := &RowsSource{Schema: schema, Rows: [][]Row{{{subtask.Int(1)}, {subtask.Int(2)}, {subtask.Int(3)}}}}
	g := NewGraph()
	in := g.Source("in", src)[0]
	Apply("op", []Stream{in}, [][]int{{0}}, schema, newOp).Sink("out", NewChangelogTable())
	return g
}

// panicOp panics on its first batch.
type panicOp struct{}

func (panicOp) Open(*OperatorContext) error { return nil }
func (panicOp) Process(int, []Record, Emitter) error {
	panic("operator panicked")
}

// A task restarted by its supervisor after a panic fails the run; its
// replacement knows nothing of the store the panicked instance held, and
// the panicked instance gets no Stopped. The run's stop closes that store.
func TestRestartedTaskStoreIsClosed(t *testing.T) {
	sys := actors.NewSystem(actors.Options{MaxRestarts: 1})
	defer sys.Close()
	be := &countedBackend{}
	run, err := Start(sys, keyedGraph(func() Operator { return panicOp{} }), Options{Parallelism: 2, Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err == nil || !strings.Contains(err.Error(), "restarted after a panic") {
		t.Fatalf("Wait = %v, want the restarted task's failure", err)
	}
	be.closedOnce(t, 2)
}

// openedOp counts the tasks whose operator opened, i.e. that were wired.
type openedOp struct{ opened *atomic.Int32 }

func (o openedOp) Open(*OperatorContext) error        { o.opened.Add(1); return nil }
func (openedOp) Process(int, []Record, Emitter) error { return nil }

// A run stopped right after it started may stop tasks before they were
// wired: they never made a store of their backend, and closed nothing when
// they stopped. The run's stop closes their stores. In a simulation the
// schedule is the seed's: some seeds stop unwired tasks, and every seed
// must leave no store open.
func TestStoresOfUnwiredTasksAreClosed(t *testing.T) {
	unwired := 0
	for seed := uint64(1); seed <= 20; seed++ {
		sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: seed}})
		be := &countedBackend{}
		var opened atomic.Int32
		run, err := Start(sim.System(), keyedGraph(func() Operator { return openedOp{opened: &opened} }),
			Options{Parallelism: 2, Backend: be, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if err := run.stop(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if opened.Load() < 2 {
			unwired++
		}
		t.Run("", func(t *testing.T) { be.closedOnce(t, 2) })
	}
	if unwired == 0 {
		t.Fatal("no seed stopped a task before it was wired: the test covers nothing")
	}
}

// A run that fails while its state is being prepared drops the prepare's
// result (the job takes nothing once failed, or is gone): the run's stop
// waits for the prepare and closes the stores it opened.
func TestStoresOfADroppedPrepareAreClosed(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	probe, err := actors.NewProbe(sys, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The run's job actor is "<name>#<n>", n counting the system's runs.
	job := actor.NewPID(probe.PID().Address, "job#1")
	injected := errors.New("injected failure")
	be := &countedBackend{opened: func(n int) {
		if n == 1 {
			sys.Send(job, &taskFailed{err: injected})
		}
	}}
	_, err = Start(sys, keyedGraph(func() Operator { return openedOp{opened: new(atomic.Int32)} }), Options{Parallelism: 2, Backend: be})
	if !errors.Is(err, injected) {
		t.Fatalf("Start = %v, want the injected failure", err)
	}
	be.closedOnce(t, 2)
}

// idleSource emits rows once, then has nothing to read, forever.
type idleSource struct {
	schema Schema
	rows   []Row
}

func (s idleSource) Schemas() []Schema { return []Schema{s.schema} }
func (s idleSource) Splits() int       { return 1 }
func (s idleSource) Open(_ int, offset int64, _ []OutputUse) (SplitReader, error) {
	return &idleReader{rows: s.rows, off: int(offset)}, nil
}

type idleReader struct {
	rows []Row
	off  int
}

func (r *idleReader) Read(max int, emit func(int, Row)) (ReadStatus, error) {
	if r.off == len(r.rows) {
		return ReadIdle, nil
	}
	for ; r.off < len(r.rows) && max > 0; max-- {
		emit(0, r.rows[r.off])
		r.off++
	}
	return ReadMore, nil
}

func (r *idleReader) Offset() int64    { return int64(r.off) }
func (r *idleReader) Watermark() int64 { return 0 }

// holdExpire holds the first snapshot file a snapshot expiration removes
// (only a maintainer's expiration job removes snapshot files) until
// release, and notes when that job goes on past the hold.
type holdExpire struct {
	table.FileIO
	*heldCall
}

func (h *holdExpire) Remove(p string) error {
	if !strings.Contains(p, "/snapshot/snapshot-") || !h.take() {
		return h.FileIO.Remove(p)
	}
	h.hold()
	defer h.ended.Store(true)
	return h.FileIO.Remove(p)
}

// heldCall holds the first call that takes it until release, and notes
// when that call ended.
type heldCall struct {
	once             sync.Once
	entered, release chan struct{}
	ended            atomic.Bool
}

func newHeldCall() *heldCall {
	return &heldCall{entered: make(chan struct{}), release: make(chan struct{})}
}

// take reports whether the calling call is the one to hold: the first.
func (h *heldCall) take() bool {
	held := false
	h.once.Do(func() { held = true })
	return held
}

func (h *heldCall) hold() {
	close(h.entered)
	<-h.release
}

// killWhileHeld kills run while h holds one of its calls, lets the call go
// once the stop waits for watch's subject (or has returned, which it must
// not have), and fails unless the kill returned only after the call ended.
func killWhileHeld(t *testing.T, run *Run, watch *releaseWatch, h *heldCall, waitedFor, call string) {
	t.Helper()
	stopped := make(chan bool)
	go func() {
		_ = run.Kill()
		stopped <- h.ended.Load()
	}()
	var ended bool
	select {
	case <-watch.waiting:
		close(h.release)
		ended = <-stopped
	case ended = <-stopped:
		close(h.release)
	case <-time.After(time.Minute):
		close(h.release)
		t.Fatalf("the run's stop neither returned nor waited for its %s", waitedFor)
	}
	if !ended {
		t.Fatalf("the run's stop returned while %s was still running", call)
	}
}

// releaseWatch signals when a stopped run starts waiting for what.
type releaseWatch struct {
	what    string
	once    sync.Once
	waiting chan struct{}
}

func (w *releaseWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *releaseWatch) Handle(_ context.Context, r slog.Record) error {
	if r.Message != msgReleasing {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "for" && a.Value.String() == w.what {
			w.once.Do(func() { close(w.waiting) })
		}
		return true
	})
	return nil
}
func (w *releaseWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *releaseWatch) WithGroup(string) slog.Handler      { return w }

// A run's stop returns only once the running jobs of its table maintainers
// ended: the next run's prepare removes the run's directories. A paimon
// run's first checkpoint leaves more snapshots than it retains, so its
// maintainer expires one in a job, which is held while the run stops; it is
// let go once the stop waits (or has returned, which it must not have).
func TestStopWaitsForHeldMaintenanceJob(t *testing.T) {
	watch := &releaseWatch{what: waitMaintenance, waiting: make(chan struct{})}
	sys := actors.NewSystem(actors.Options{Logger: slog.New(watch)})
	defer sys.Close()
	hold := &holdExpire{FileIO: table.NewLocalFileIO(), heldCall: newHeldCall()}
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	var rows []Row
	for k := range 100 {
		rows = append(rows, Row{subtask.Int(int64(k % 10))})
	}
	g := NewGraph()
	in := g.Source("in", idleSource{schema: schema, rows: rows})[0]
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", NewChangelogTable())
	run, err := Start(sys, g, Options{Dir: t.TempDir(),
		Backend: PaimonBackend(subtask.PaimonOptions{FileIO: hold}, compaction.Config{RetainSnapshots: 1})})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.entered:
	case <-time.After(time.Minute):
		t.Fatal("no maintenance job expired a snapshot after the first checkpoint")
	}
	killWhileHeld(t, run, watch, hold.heldCall, "maintenance jobs", "a maintenance job of it")
}

// panicsInPrepared is a backend whose maintenance policy panics: the job
// actor asks for it when its prepare's result arrives, so it panics after
// the prepare opened the stores.
type panicsInPrepared struct{ *countedBackend }

func (panicsInPrepared) maintenance() compaction.Config { panic("maintenance policy panicked") }

// A job actor that panics fails the run, whether its supervisor stops it
// (the driver sees it terminate: the stop must not wait for that again) or
// restarts it (a job actor started again would prepare a second time); the
// stores the prepare opened are closed either way.
func TestJobActorPanicFailsTheRun(t *testing.T) {
	for _, restarts := range []int{0, 1} {
		sys := actors.NewSystem(actors.Options{MaxRestarts: restarts})
		be := &countedBackend{}
		// Without a bound a stop waiting for the job actor's second
		// termination would hang the test.
		_, err := Start(sys, keyedGraph(func() Operator { return openedOp{opened: new(atomic.Int32)} }),
			Options{Parallelism: 2, Backend: panicsInPrepared{be}, Wait: time.Minute})
		want := "job actor terminated"
		if restarts > 0 {
			want = "job actor restarted after a panic"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("max restarts %d: Start = %v, want %q", restarts, err, want)
		}
		be.closedOnce(t, 2)
		sys.Close()
	}
}

// A run killed in a simulation crashes its actors, and its stores are
// closed all the same, as a crashed process's are released.
func TestKilledSimulatedRunClosesItsStores(t *testing.T) {
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 1}})
	be := &countedBackend{}
	run, err := Start(sim.System(), keyedGraph(func() Operator { return openedOp{opened: new(atomic.Int32)} }),
		Options{Parallelism: 2, Backend: be, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	if err := run.Kill(); err != nil {
		t.Fatal(err)
	}
	be.closedOnce(t, 2)
}

// holdCommits holds its first commit until release and notes when that
// commit ended.
type holdCommits struct {
	*heldCall
}

func (h *holdCommits) Commit(*Txn) error {
	if h.take() {
		h.hold()
		h.ended.Store(true)
	}
	return nil
}

// A run's stop returns only once the running executor jobs of its
// operators ended: a sink's commit still running after the stop would race
// the next run's commit of the same transactions. The first checkpoint's
// commit is held while the run stops; it is let go once the stop waits (or
// has returned, which it must not have).
func TestStopWaitsForRunningSinkCommit(t *testing.T) {
	watch := &releaseWatch{what: waitOperators, waiting: make(chan struct{})}
	sys := actors.NewSystem(actors.Options{Logger: slog.New(watch)})
	defer sys.Close()
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	g := NewGraph()
	in := g.Source("in", idleSource{schema: schema, rows: []Row{{subtask.Int(1)}, {subtask.Int(2)}}})[0]
	commits := &holdCommits{newHeldCall()}
	in.Sink("out", commits)
	run, err := Start(sys, g, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-commits.entered:
	case <-time.After(time.Minute):
		t.Fatal("the sink did not commit the first checkpoint")
	}
	killWhileHeld(t, run, watch, commits.heldCall, "jobs", "its sink's commit")
}

// A final checkpoint that fails on every try (here every store declines:
// the test's stores have no checkpoint support) is asked for again after a
// pause, not at once: in a simulation the clock moves on, and the run is
// not busy retrying. (Unbounded here: by default the run fails after
// DefaultCheckpointFailures of them.)
func TestFailingFinalCheckpointIsRetriedAfterAPause(t *testing.T) {
	sim := actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: 1}, MaxSteps: 200_000})
	run, err := Start(sim.System(), keyedGraph(func() Operator { return openedOp{opened: new(atomic.Int32)} }),
		Options{Parallelism: 2, Backend: &countedBackend{}, Dir: t.TempDir(), CheckpointFailures: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.RunFor(time.Second); err != nil {
		t.Fatalf("a second of the failing run: %v", err)
	}
	aborted := 0
	for _, m := range run.probe.Drain() {
		if _, ok := m.(*evAborted); ok {
			aborted++
		}
	}
	// One try per 10 ms poll, give or take the ones before the sources
	// ended.
	if aborted < 50 || aborted > 150 {
		t.Fatalf("%d checkpoints aborted in a second, want one per poll", aborted)
	}
	if err := run.Kill(); err != nil {
		t.Fatal(err)
	}
}

// holdUpload holds the first put of a checkpoint file (one that ignores
// its context, as a store may) until release, and notes when it ended.
type holdUpload struct {
	barrier.BlobStore
	*heldCall
}

func (h *holdUpload) Put(ctx context.Context, name string, r io.Reader) error {
	if !strings.HasPrefix(name, "shared/") || !h.take() {
		return h.BlobStore.Put(ctx, name, r)
	}
	h.hold()
	defer h.ended.Store(true)
	return h.BlobStore.Put(context.Background(), name, r)
}

// A run's stop returns only once its uploader's puts ended: the next run's
// coordinator sweeps the blob store for orphans, and a put landing after
// that would stay. A pebble run's first checkpoint upload is held in a put
// that ignores cancellation while the run stops; it is let go once the
// stop waits for uploads (or has returned, which it must not have).
func TestStopWaitsForRunningUpload(t *testing.T) {
	watch := &releaseWatch{what: waitUploads, waiting: make(chan struct{})}
	sys := actors.NewSystem(actors.Options{Logger: slog.New(watch)})
	defer sys.Close()
	dir := t.TempDir()
	store, err := blobdir.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	blobs := &holdUpload{BlobStore: store, heldCall: newHeldCall()}
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}}
	g := NewGraph()
	in := g.Source("in", idleSource{schema: schema, rows: []Row{{subtask.Int(1)}, {subtask.Int(2)}}})[0]
	Aggregate("count", in, []int{0}, Count("n")).Sink("out", NewChangelogTable())
	run, err := Start(sys, g, Options{Dir: dir, Blobs: blobs, Backend: PebbleBackend(subtask.PebbleOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.AwaitSourcesIdle(); err != nil {
		t.Fatal(err)
	}
	sys.Send(run.job, &triggerRequest{token: 1})
	select {
	case <-blobs.entered:
	case <-time.After(time.Minute):
		t.Fatal("the first checkpoint uploaded nothing")
	}
	killWhileHeld(t, run, watch, blobs.heldCall, "uploads", "a put of its uploader")
}
