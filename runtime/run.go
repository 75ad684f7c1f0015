package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/table"
)

// Options configure a run of a job.
type Options struct {
	// Name names the job; the run's actors are named after it and the run's
	// number in Checkpoints, so two jobs that share a system need different
	// names or stores. Default "job".
	Name string
	// Parallelism is the number of subtasks of every operator; default 1.
	Parallelism int
	// MaxParallelism is the number of key groups; it cannot change across
	// restores. Default keygroup.DefaultMaxParallelism.
	MaxParallelism int
	// BatchSize is the number of rows a source reads per batch; default
	// 16384. Stateful operators read their state once per batch, so the
	// batch shares a backend's fixed cost per probe (a table probe opens and
	// decodes pages whether it looks for one key or a hundred): q4 over 100K
	// events with 500 ms checkpoints ran at 5x the events/s per core on
	// paimon and 1.3x on memory with 16384 rather than 1024.
	BatchSize int
	// Credits is the number of data batches a channel keeps in flight;
	// default 4.
	Credits int
	// Backend makes the subtask stores; default MemoryBackend().
	Backend StateBackend
	// Dir holds the job's local files: each subtask's state and checkpoint
	// directories under Dir/<Name>/local (removed when the run finishes or
	// the next run starts) and, unless Blobs is set, the checkpoints under
	// Dir/<Name>/checkpoints. Default: a temporary directory removed when
	// the run ends.
	Dir string
	// Blobs is where checkpoints live; default a local directory store
	// (barrier/blobdir) under Dir.
	Blobs barrier.BlobStore
	// Retain is how many completed checkpoints are kept; default 1.
	Retain int
	// RestoreLatest makes the run start from the latest completed checkpoint
	// in Blobs, at any parallelism (same MaxParallelism and backend); a
	// run without one fails to start. Checkpoint ids continue after every
	// checkpoint Blobs holds.
	RestoreLatest bool
	// CheckpointInterval, if positive, triggers checkpoints periodically on
	// the system clock; checkpoints are also taken on request (Run.Checkpoint)
	// and once at the end. At most one is in flight, unless
	// OverlapCheckpoints.
	CheckpointInterval time.Duration
	// OverlapCheckpoints lets the next checkpoint start once every task
	// ended the sync phase of the one in flight rather than once it
	// completed: at most two are in flight. A paimon store's commit and
	// maintenance round run after its sync phase; its next barrier waits
	// for them, so they bound the checkpoint interval instead of the
	// whole checkpoint (upload and metadata included) doing so, and a
	// store's memory stays bounded by the interval. The lakestate command
	// turns it on by default.
	OverlapCheckpoints bool
	// CheckpointTimeout aborts a checkpoint that takes longer; default 10
	// minutes.
	CheckpointTimeout time.Duration
	// CheckpointFailures is how many checkpoints in a row may fail (a
	// store declines, an upload, the metadata write or a timeout aborts it)
	// before the run fails with the last one's cause; a completed
	// checkpoint starts the count again, and one aborted because a later
	// one completed is no failure. A failure that lasts (the local state
	// or checkpoint directory gone, a full disk) would otherwise have the
	// run retry checkpoints for ever, its state held in memory meanwhile.
	// Default DefaultCheckpointFailures; negative: no bound.
	CheckpointFailures int
	// IdlePoll is how long a source with nothing to read waits before it
	// polls again; default 10ms.
	IdlePoll time.Duration
	// Wait bounds how long the driver waits for the run's next event in the
	// real system; default 10 minutes.
	Wait time.Duration
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "job"
	}
	if o.Parallelism == 0 {
		o.Parallelism = 1
	}
	if o.MaxParallelism == 0 {
		o.MaxParallelism = keygroup.DefaultMaxParallelism
	}
	if o.BatchSize == 0 {
		o.BatchSize = 16384
	}
	if o.Credits == 0 {
		o.Credits = 4
	}
	if o.Backend == nil {
		o.Backend = MemoryBackend()
	}
	if o.IdlePoll == 0 {
		o.IdlePoll = 10 * time.Millisecond
	}
	if o.Wait == 0 {
		o.Wait = 10 * time.Minute
	}
	if o.CheckpointFailures == 0 {
		o.CheckpointFailures = DefaultCheckpointFailures
	}
}

// DefaultCheckpointFailures is the default Options.CheckpointFailures: with
// a checkpoint every 500 ms, five seconds of failing checkpoints.
const DefaultCheckpointFailures = 10

// Run is a running job, driven from outside the actors: from one goroutine,
// the simulation's owner when the system is simulated.
type Run struct {
	sys   *actors.System
	opts  Options
	probe *actors.Probe
	job   *actor.PID
	env   *taskEnv
	token uint64
	// tmp is the temporary Dir the run made, removed when it ends.
	tmp string
	// restored is the checkpoint the run started from (0: none).
	restored int64
	// completed is the newest checkpoint the run reported complete.
	completed int64
	stats     RunStats
	// idleEvents counts the times every source became idle; idleAwaited how
	// many of them AwaitSourcesIdle has returned for.
	idleEvents, idleAwaited int
	finished                bool
	err                     error
	// jobGone: the driver saw the job actor terminate (it panicked, or
	// stop stopped it).
	jobGone bool
}

// ErrRunEnded reports a wait on a run that finished, failed or was killed
// before the awaited event.
var ErrRunEnded = errors.New("run ended")

// Start runs the graph on sys: it starts the run's checkpoint actors and
// tasks, restoring their state first when opts.RestoreLatest says so, and
// returns once the sources read.
func Start(sys *actors.System, g *Graph, opts Options) (*Run, error) {
	opts.defaults()
	if err := g.validate(); err != nil {
		return nil, err
	}
	p, err := newPlan(g, opts.Parallelism, opts.MaxParallelism)
	if err != nil {
		return nil, err
	}
	r := &Run{sys: sys, opts: opts}
	if opts.Dir == "" {
		if opts.RestoreLatest && opts.Blobs == nil {
			return nil, fmt.Errorf("run %s: a restore needs the checkpoints of an earlier run: Options.Dir or Options.Blobs", opts.Name)
		}
		if r.tmp, err = os.MkdirTemp("", "lakestate-"+opts.Name+"-*"); err != nil {
			return nil, err
		}
		opts.Dir = r.tmp
	}
	jobDir := filepath.Join(opts.Dir, opts.Name)
	if opts.Blobs == nil {
		blobs, err := blobdir.Open(filepath.Join(jobDir, "checkpoints"))
		if err == nil {
			// The run owns its checkpoint directory: puts a crashed run left
			// half-written are its to remove, judged by the system's clock.
			err = blobs.RemoveStaleTemporaries(sys.Clock().Now())
		}
		if err != nil {
			r.removeTmp()
			return nil, err
		}
		opts.Blobs = blobs
	}
	r.opts = opts
	name := fmt.Sprintf("%s#%d", opts.Name, nextRun(sys))
	local := filepath.Join(jobDir, "local")
	env := &taskEnv{sys: sys, plan: p, opts: &r.opts, fio: table.NewLocalFileIO(), local: local, dir: filepath.Join(local, name),
		maint: &compaction.Jobs{}, stores: &runStores{}, opJobs: &operatorJobs{sys: sys}, uploads: &actors.JobFence{}}
	if r.probe, err = actors.NewProbe(sys, name+"-driver"); err != nil {
		r.removeTmp()
		return nil, err
	}
	r.probe.SetWait(opts.Wait)
	r.env = env
	job := &jobActor{env: env, driver: r.probe.PID(), idle: map[int]bool{}, committed: map[int]int64{}}
	if r.job, err = sys.Spawn(name, jobProducer(job)); err != nil {
		sys.Stop(r.probe.PID())
		r.removeTmp()
		return nil, fmt.Errorf("spawn run %s: %w", name, err)
	}
	r.probe.Watch(r.job)
	var started bool
	if err := r.await(func(msg any) bool { _, started = msg.(*evStarted); return started }); err != nil {
		_ = r.stop()
		return nil, err
	}
	return r, nil
}

// runNumbers numbers the runs of each system. A run's actors are named by
// it, so that a message addressed to a task of an ended run (a commit result
// or a poll timer still on its way) never reaches the same-named task of the
// next run.
// The key is weak, so that a closed system can be collected.
var runNumbers sync.Map // weak.Pointer[actors.System] → *atomic.Int64

func nextRun(sys *actors.System) int64 {
	n, _ := runNumbers.LoadOrStore(weak.Make(sys), new(atomic.Int64))
	return n.(*atomic.Int64).Add(1)
}

// RunStats describes a run's checkpoints as far as the driver has seen.
type RunStats struct {
	// Completed and Aborted count the run's checkpoints.
	Completed, Aborted int
	// AbortCauses says why each aborted checkpoint was aborted, in the
	// order the driver saw them (with overlapping checkpoints most often
	// one that a later completed checkpoint subsumed).
	AbortCauses []error
	// UploadedBytes and ReusedBytes sum what the subtasks' Store actors
	// handed to the uploader and referenced from earlier checkpoints.
	UploadedBytes, ReusedBytes int64
	// Stalls counts the times the sources were held because some store's
	// maintenance fell behind.
	Stalls int
	// Syncs is every keyed subtask's sync-phase duration (barrier aligned
	// to SyncDone, the subtask paused: a memory or pebble store's flush and
	// listing; a paimon store's freeze of its write buffers, after the wait
	// for the previous checkpoint's maintenance round), in arrival order. Subtasks without keyed state are left out: their
	// sync phase only hands their extras on.
	Syncs []time.Duration
}

// Stats describes the run's checkpoints.
func (r *Run) Stats() RunStats { return r.stats }

// Restored is the checkpoint the run started from, 0 for a fresh start.
func (r *Run) Restored() int64 { return r.restored }

func (r *Run) removeTmp() {
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
		r.tmp = ""
	}
}

// next takes the run's next event and records what it says.
func (r *Run) next() (any, error) {
	msg, err := r.probe.Next()
	if err != nil {
		return nil, err
	}
	switch m := msg.(type) {
	case *evStarted:
		r.restored = m.restored
	case *evCompleted:
		r.completed = max(r.completed, m.id)
		r.stats.Completed++
	case *evAborted:
		r.stats.Aborted++
		r.stats.AbortCauses = append(r.stats.AbortCauses, m.err)
	case *evBackpressure:
		if m.stalled {
			r.stats.Stalls++
		}
	case *evSynced:
		if m.keyed {
			r.stats.Syncs = append(r.stats.Syncs, m.took)
		}
	case *evUploaded:
		r.stats.UploadedBytes += m.stats.UploadBytes
		r.stats.ReusedBytes += m.stats.ReusedBytes
	case *evFinished:
		r.finished = true
	case *evSourcesIdle:
		r.idleEvents++
	case *evFailed:
		r.err = m.err
	case *actor.Terminated:
		if m.Who.Equal(r.job) {
			r.jobGone = true
		}
		if r.err == nil && !r.finished {
			r.err = fmt.Errorf("run %s: job actor terminated", r.opts.Name)
		}
	}
	return msg, nil
}

// await takes events until stop accepts one, the run ends, or the wait
// fails.
func (r *Run) await(stop func(any) bool) error {
	for {
		if r.err != nil {
			return r.err
		}
		msg, err := r.next()
		if err != nil {
			return err
		}
		if stop(msg) {
			return nil
		}
		if r.err != nil {
			return r.err
		}
		if r.finished {
			return ErrRunEnded
		}
	}
}

// Checkpoint triggers a checkpoint and waits until it completes; it returns
// the checkpoint's id, or an error if it was aborted.
func (r *Run) Checkpoint() (int64, error) {
	r.token++
	tok := r.token
	r.sys.Send(r.job, &triggerRequest{token: tok})
	var id int64
	if err := r.await(func(msg any) bool {
		m, ok := msg.(*evTriggered)
		if ok && m.token == tok {
			id = m.id
		}
		return ok && m.token == tok
	}); err != nil {
		return 0, err
	}
	var aborted error
	err := r.await(func(msg any) bool {
		switch m := msg.(type) {
		case *evCompleted:
			return m.id == id
		case *evAborted:
			if m.id == id {
				aborted = fmt.Errorf("checkpoint %d aborted: %w", id, m.err)
				return true
			}
		}
		return false
	})
	if err == nil {
		err = aborted
	}
	return id, err
}

// AwaitSourcesIdle waits until every source has nothing to read (or has
// finished). Each time the sources become idle together is awaited once, in
// order, whether or not the driver saw it while waiting for something else:
// a source held back and then let go is idle again only once it has read
// what it was let go to read.
func (r *Run) AwaitSourcesIdle() error {
	if r.idleEvents == r.idleAwaited {
		if err := r.await(func(msg any) bool { _, ok := msg.(*evSourcesIdle); return ok }); err != nil {
			return err
		}
	}
	r.idleAwaited++
	return nil
}

// Completed is the newest checkpoint the run completed, as far as the
// driver has seen.
func (r *Run) Completed() int64 { return r.completed }

// Wait waits until every source has ended, a final checkpoint captured all
// output and every sink committed it; then it stops the run's actors.
func (r *Run) Wait() error {
	if !r.finished {
		err := r.await(func(msg any) bool { _, ok := msg.(*evFinished); return ok })
		if err != nil {
			_ = r.stop()
			return err
		}
	}
	return r.stop()
}

// Kill ends the run as a crash would: its actors vanish with whatever they
// held, output staged and not committed is lost. A later run restores from
// a completed checkpoint. In a simulation the actors crash; the stores they
// held are closed still, as a crashed process's files and memory are
// released (a pebble store's database would stay open otherwise).
func (r *Run) Kill() error {
	if sim, ok := r.sys.Simulated(); ok {
		sim.Crash(r.job)
		r.jobGone = true
		r.sys.Stop(r.probe.PID())
		r.release()
		r.removeTmp()
		return nil
	}
	return r.stop()
}

// stop stops the job actor and its tasks, waits until they are gone, and
// releases what the run holds. A job actor that terminated on its own (a
// panic) is not waited for again: the driver saw it go.
func (r *Run) stop() error {
	defer r.removeTmp()
	defer r.sys.Stop(r.probe.PID())
	if !r.jobGone {
		r.sys.Stop(r.job)
	}
	for !r.jobGone {
		msg, err := r.probe.Next()
		if err != nil {
			return err
		}
		if t, ok := msg.(*actor.Terminated); ok && t.Who.Equal(r.job) {
			r.jobGone = true
		}
	}
	r.release()
	return nil
}

// release waits, once the run's actors are gone, until nothing of the run
// runs or uses its directories any more, which the next run's prepare
// removes: every store closed through its fence (after the Store actors'
// running jobs, or after the prepare that is still opening them), no job of
// the table maintainers running (they write into the tables), and no job of
// the operators (a sink's commit of a stopped run is the next run's to
// repeat, not to race), and no put of the uploader. A store that fails to close is logged: the run's
// outcome is in its checkpoints.
func (r *Run) release() {
	r.env.opJobs.stop()
	r.env.stores.close()
	r.releasing(waitStores)
	if err := r.env.stores.wait(); err != nil {
		r.sys.Logger().Warn("closing the stores of a stopped run", "run", r.job.Id, "err", err)
	}
	r.releasing(waitMaintenance)
	r.env.maint.Wait()
	r.releasing(waitOperators)
	r.env.opJobs.wait()
	// The next run's coordinator sweeps the blob store for orphans: no put
	// of this run may land after that.
	r.env.uploads.Close(func() error { return nil })
	r.releasing(waitUploads)
	<-r.env.uploads.Done()
}

// What a stopped run waits for, in order, each logged (msgReleasing) before
// its wait: a stop that hangs says on what.
const (
	msgReleasing    = "stopped run waits"
	waitStores      = "stores to close"
	waitMaintenance = "maintenance jobs to end"
	waitOperators   = "operator jobs to end"
	waitUploads     = "uploads to end"
)

func (r *Run) releasing(what string) {
	r.sys.Logger().Debug(msgReleasing, "run", r.job.Id, "for", what)
}
