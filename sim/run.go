package sim

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/internal/plant"
	"github.com/lakestate/lakestate/sim/faultblob"
	"github.com/lakestate/lakestate/sim/faultfs"
	"github.com/lakestate/lakestate/table"
)

// env is everything that outlives the runs of one seed's job: the blob
// store, the local filesystem, the external system the sink commits to,
// the checker and the driver's random source.
type env struct {
	cfg   Config
	sim   *actors.Sim // nil on the real system
	sys   *actors.System
	rng   *rand.Rand
	blobs *checkedBlobs
	fblob *faultblob.Store
	ffs   *faultfs.FS // nil on the real system
	fio   table.FileIO
	ext   *external
	check *checker

	stream *stream
	model  *model
	keys   int

	backend       string
	root          string
	maxP          int
	retain        int
	maxConcurrent int
	timeout       time.Duration
	jumpChance    float64
	triggerEvery  int
	pace          int
	minAttempts   int // the uploader's fewest attempts per file
	// paimon
	retainSnapshots int
	shapingBudget   int64
	// stepBytes is the maintenance sessions' shaping step size: small ones
	// cut this run's compactions by key range.
	stepBytes    int64
	tableOptions []table.Option
	// checkedSnapshots is the newest snapshot checkCompactors saw, per table
	// directory.
	checkedSnapshots map[string]int64

	// fault intensities
	blobFaults faultblob.Faults
	fsFaults   faultfs.Faults
	pCrashSub  float64
	pCrashProc float64
	pDecline   float64
	live       liveFaults

	parMode    int // 0 up, 1 down, 2 random
	runs       int
	restores   int
	progressTo *actor.PID
	ticker     *actor.PID
	stoppers   int

	mu       sync.Mutex
	faults   map[string]int
	trace    []string
	opFailed error
	failRun  int
}

// liveFaults are the fault knobs the relays read while they run.
type liveFaults struct {
	notifyLost, notifyLate float64
}

func newEnv(cfg Config) *env {
	e := &env{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0xd1ce)), faults: map[string]int{}, checkedSnapshots: map[string]int64{}}
	r := e.rng
	if cfg.Backends == nil {
		// Paimon seeds cost several times what memory seeds do: one in
		// six runs on paimon by default.
		e.backend = barrier.BackendMemory
		if r.IntN(6) == 0 {
			e.backend = barrier.BackendPaimon
		}
	} else {
		e.backend = cfg.Backends[r.IntN(len(cfg.Backends))]
	}
	n := cfg.Events
	if n <= 0 {
		n = 400 + r.IntN(1200)
		if e.backend == barrier.BackendPaimon {
			// Every paimon checkpoint writes, rounds and lists four
			// tables: fewer events keep a seed within a second or two.
			n = 80 + r.IntN(220)
		}
	}
	e.keys = 8 + r.IntN(40)
	e.stream = newStream(cfg.Seed, n, e.keys)
	e.model = runModel(e.stream)
	e.maxP = []int{3, 4, 7, 16, 128}[r.IntN(5)]
	e.retain = 1 + r.IntN(3)
	e.maxConcurrent = 1 + r.IntN(2)
	e.timeout = 10 * time.Minute
	if cfg.has(FaultTimeout) {
		e.timeout = time.Duration(2+r.IntN(40)) * time.Millisecond
		e.jumpChance = 0.001 + r.Float64()*0.02
	}
	e.minAttempts = 2
	e.triggerEvery = 5 + r.IntN(40)
	e.pace = 1 + r.IntN(4)
	// Each fault kind is on for a seed with some intensity, so that seeds
	// range from calm to stormy.
	if cfg.has(FaultUploadFail) {
		e.blobFaults.Failure = r.Float64() * 0.15
	}
	if cfg.has(FaultUploadAmbiguous) {
		e.blobFaults.Timeout = r.Float64() * 0.1
		e.blobFaults.Landed = 0.5
	}
	if cfg.has(FaultFsyncEIO) {
		e.fsFaults.SyncFailure = r.Float64() * 0.01
	}
	if cfg.has(FaultENOSPC) {
		e.fsFaults.Capacity = int64(64<<10 + r.IntN(1<<20))
	}
	if cfg.has(FaultCrashSubtask) {
		e.pCrashSub = r.Float64() * 0.02
	}
	if cfg.has(FaultCrashProcess) {
		e.pCrashProc = r.Float64() * 0.015
	}
	if cfg.has(FaultDecline) {
		e.pDecline = r.Float64() * 0.2
	}
	if cfg.has(FaultNotifyLost) {
		e.live.notifyLost = r.Float64() * 0.3
	}
	if cfg.has(FaultNotifyLate) {
		e.live.notifyLate = r.Float64() * 0.3
	}
	e.retainSnapshots = r.IntN(6)
	e.shapingBudget = int64(r.IntN(3)) * 64 << 10
	e.parMode = r.IntN(3)
	e.stepBytes = []int64{0, 0, 1 << 10, 4 << 10}[r.IntN(4)]
	if cfg.StepBytes != 0 {
		e.stepBytes = cfg.StepBytes
	}
	e.ext = newExternal(e.model.out, func(err error) { e.check.fail(err) })
	return e
}

// count records one injected fault.
func (e *env) count(kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults[kind]++
}

func (e *env) steps() uint64 {
	if e.sim == nil {
		return 0
	}
	return e.sim.Steps()
}

func (e *env) logf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.trace = append(e.trace, fmt.Sprintf("step %d: %s", e.steps(), fmt.Sprintf(format, args...)))
}

func (e *env) operatorFailed(run int, err error) {
	e.mu.Lock()
	if e.opFailed == nil {
		e.opFailed, e.failRun = err, run
	}
	e.mu.Unlock()
	if e.sim == nil && e.progressTo != nil {
		e.sys.Send(e.progressTo, &progress{}) // wake the real system's driver
	}
}

// takeFailure returns the operator failure of run, if any, and clears it.
func (e *env) takeFailure(run int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.opFailed
	if e.failRun != run {
		err = nil
	}
	e.opFailed = nil
	return err
}

// firstParallelism and nextParallelism follow the seed's rescale pattern:
// 1→2→3, 3→2→1, or random.
func (e *env) firstParallelism() int {
	if !e.cfg.has(FaultRescale) {
		return 1 + e.rng.IntN(min(3, e.maxP))
	}
	switch e.parMode {
	case 0:
		return 1
	case 1:
		return min(3, e.maxP)
	}
	return 1 + e.rng.IntN(min(3, e.maxP))
}

func (e *env) nextParallelism(p int) int {
	if !e.cfg.has(FaultRescale) {
		return p
	}
	switch e.parMode {
	case 0:
		return min(p+1, 3, e.maxP)
	case 1:
		return max(p-1, 1)
	}
	return 1 + e.rng.IntN(min(3, e.maxP))
}

// Run runs one seed of the workload and checks it.
func Run(cfg Config) Result {
	cfg = cfg.withDefaults()
	bugs, err := plant.ParseList(cfg.Plant)
	if err == nil {
		var release func()
		if release, err = plant.Enable(bugs); err == nil {
			defer release()
		}
	}
	if err != nil {
		return Result{Seed: cfg.Seed, Err: err, Faults: map[string]int{}}
	}
	e := newEnv(cfg)
	if cfg.Dir != "" {
		return e.runReal()
	}
	return e.runSim()
}

func (e *env) result(err error, step uint64) Result {
	res := Result{Seed: e.cfg.Seed, Backend: e.backend, Faults: map[string]int{}, Restores: e.restores}
	e.mu.Lock()
	for k, v := range e.faults {
		res.Faults[k] = v
	}
	res.Trace = slices.Clone(e.trace)
	e.mu.Unlock()
	if cerr, cstep := e.check.failed(); cerr != nil {
		err, step = cerr, cstep
	}
	if e.sim != nil {
		res.TraceHash, res.Steps = e.sim.TraceHash(), e.sim.Steps()
	}
	res.Checkpoints = e.check.completedCount()
	res.OK, res.Err, res.Step = err == nil, err, step
	if err != nil {
		res.Trace = append(res.Trace, fmt.Sprintf("step %d: FAIL %v", step, err))
	}
	return res
}

func (e *env) newStores(fs table.FileIO) {
	e.fblob = faultblob.New(rand.New(rand.NewPCG(e.cfg.Seed, 0xb10b)), e.blobFaults, nil)
	e.blobs = &checkedBlobs{inner: e.fblob, env: e, docs: map[string]*metaDoc{}}
	e.fio = &countingFS{FileIO: fs, env: e}
}

func (e *env) runSim() Result {
	e.sim = actors.NewSim(actors.SimOptions{
		Options:         actors.Options{Seed: e.cfg.Seed, Logger: slog.New(&logWatch{env: e})},
		TimerJumpChance: e.jumpChance,
		MaxSteps:        2_000_000,
		Trace:           e.cfg.TraceTo,
	})
	e.sys = e.sim.System()
	e.check = newChecker(e.sim.Steps)
	e.ffs = faultfs.New(rand.New(rand.NewPCG(e.cfg.Seed, 0xf5f5)), e.fsFaults)
	e.newStores(e.ffs)
	e.root = "/sim"
	e.tableOptions = []table.Option{table.WithRand(rand.NewChaCha8(e.entropy(0, -1)))}
	e.logf("seed %d: backend %s, %d events over %d keys, maxP %d, retain %d, concurrent %d, timeout %v, faults %s",
		e.cfg.Seed, e.backend, len(e.stream.events), e.keys, e.maxP, e.retain, e.maxConcurrent, e.timeout, strings.Join(e.cfg.Faults, ","))
	err := e.drive()
	return e.result(err, e.steps())
}

// drive runs the faulty phase, heals, runs the job to its end and audits.
func (e *env) drive() error {
	p := e.firstParallelism()
	j, err := e.startWithRetries(p)
	if err != nil {
		return err
	}
	failoverAt := uint64(0)
	for chunk := 0; e.sim.Steps() < uint64(e.cfg.Steps) && !e.finished(); chunk++ {
		if _, err := e.sim.Run(1 + e.rng.IntN(100)); err != nil {
			return err
		}
		if chunk%8 == 0 {
			e.checkCompactors(j)
		}
		if err, _ := e.check.failed(); err != nil {
			return err
		}
		if ferr := e.takeFailure(j.run); ferr != nil {
			if !e.cfg.has(FaultFsyncEIO) && !e.cfg.has(FaultENOSPC) {
				return fmt.Errorf("operator failed without a local fault: %w", ferr)
			}
			e.logf("operator failed: %v", ferr)
			failoverAt = e.sim.Steps()
		}
		switch {
		case failoverAt != 0 && e.sim.Steps() >= failoverAt:
			failoverAt = 0
			if j, err = e.restart(j, false); err != nil {
				return err
			}
		case e.pCrashProc > 0 && e.rng.Float64() < e.pCrashProc:
			e.count(FaultCrashProcess)
			failoverAt = 0
			if j, err = e.restart(j, true); err != nil {
				return err
			}
		case failoverAt == 0 && e.pCrashSub > 0 && e.rng.Float64() < e.pCrashSub:
			e.count(FaultCrashSubtask)
			i := e.rng.IntN(len(j.keyed))
			e.logf("crash keyed subtask %d", i)
			e.sim.Crash(j.keyed[i].pids...)
			failoverAt = e.sim.Steps() + uint64(e.rng.IntN(300))
		case j.lastID != 0 && e.pDecline > 0 && e.rng.Float64() < e.pDecline:
			if op, i, ok := e.check.declineTarget(j.run, j.lastID); ok {
				e.count(FaultDecline)
				e.sys.Send(j.coord, &barrier.Decline{ID: j.lastID, Operator: op, Subtask: i, Err: errInjectedDecline})
			}
		}
	}
	e.heal()
	if failoverAt != 0 || e.cfg.has(FaultTimeout) {
		if j, err = e.restart(j, false); err != nil {
			return err
		}
	}
	const healSteps = 1_000_000
	failovers := 0
	for limit := e.sim.Steps() + healSteps; !e.finished(); {
		if e.sim.Steps() >= limit {
			return fmt.Errorf("liveness: %d of %d outputs committed %d steps after the faults healed", e.ext.committed(), len(e.stream.events), healSteps)
		}
		if _, err := e.sim.Run(1000); err != nil {
			return err
		}
		if err, _ := e.check.failed(); err != nil {
			return err
		}
		if ferr := e.takeFailure(j.run); ferr != nil {
			// A checkpoint that times out during a paimon store's sync
			// phase leaves the store unreadable: the job fails over, as it
			// must, but only so often before that is a liveness failure.
			if failovers++; failovers > maxHealedFailovers {
				return fmt.Errorf("liveness: %d failovers after the faults healed, the last: %w", failovers, ferr)
			}
			e.logf("operator failed: %v", ferr)
			if j, err = e.restart(j, false); err != nil {
				return err
			}
		}
	}
	e.logf("all %d outputs committed", len(e.stream.events))
	return e.finish(j)
}

// maxHealedFailovers bounds the failovers after the faults healed.
const maxHealedFailovers = 20

var errInjectedDecline = errors.New("injected decline")

// heal turns every fault off.
func (e *env) heal() {
	e.logf("faults heal")
	e.fblob.SetFaults(faultblob.Faults{})
	e.ffs.SetFaults(faultfs.Faults{})
	e.pCrashProc, e.pCrashSub, e.pDecline = 0, 0, 0
	e.live = liveFaults{}
	e.timeout = 10 * time.Minute
	if e.jumpChance > 0 {
		t := &ticker{sys: e.sys, period: time.Millisecond}
		pid, err := e.sys.Spawn("ticker", func() actor.Actor { return t })
		if err != nil {
			e.check.fail(fmt.Errorf("spawning the ticker: %w", err))
		}
		e.ticker = pid
	}
}

func (e *env) finished() bool { return e.ext.committed() == len(e.stream.events) }

// crashJob crashes every actor of a run at once, and checks the run's
// tables once nothing of the run writes into them any more: on the real
// system a Store actor's commit or a maintainer's job may still run after
// the actors stopped, until the stores are released.
func (e *env) crashJob(j *job) {
	if j == nil {
		return
	}
	if e.sim != nil {
		e.sim.Crash(j.pids...)
	} else {
		e.stopActors(j.pids)
	}
	j.release()
	j.awaitReleased()
	e.checkCompactors(j)
}

// restart fails the job over: every actor of the run crashes (and with
// crashFS the local disk loses what was not synced), then a new run
// restores from the newest completed checkpoint.
func (e *env) restart(j *job, crashFS bool) (*job, error) {
	e.crashJob(j)
	if crashFS {
		e.ffs.Crash()
		e.logf("process crash")
	} else {
		e.logf("failover")
	}
	// The old run's state directory goes, as a restarted process's scratch
	// space would (durably, or its files would hold space forever).
	if err := e.fio.RemoveAll(path.Join(e.root, fmt.Sprintf("run-%d", j.run))); err != nil {
		e.logf("removing the state of run %d: %v", j.run, err)
	} else if err := e.fio.SyncDir(e.root); err != nil {
		e.logf("syncing %s: %v", e.root, err)
	}
	return e.startWithRetries(e.nextParallelism(j.p))
}

// startWithRetries starts a run; a start that fails under blob faults is
// retried, and after a few failures the blob faults heal.
func (e *env) startWithRetries(p int) (*job, error) {
	for attempt := 0; ; attempt++ {
		j, err := e.startJob(p)
		if err == nil {
			return j, nil
		}
		if cerr, _ := e.check.failed(); cerr != nil {
			return nil, cerr
		}
		e.crashJob(j)
		e.logf("start failed: %v", err)
		switch {
		case attempt == 2:
			e.logf("blob and disk faults heal for the start")
			e.fblob.SetFaults(faultblob.Faults{})
			if e.ffs != nil {
				e.ffs.SetFaults(faultfs.Faults{})
			}
		case attempt > 2:
			return nil, fmt.Errorf("restart without faults failed: %w", err)
		}
	}
}

// finish stops triggering, waits for the job to settle and audits it.
func (e *env) finish(j *job) error {
	e.sys.Request(j.jobAc, &stopTriggers{}, j.probe.PID())
	if _, err := actors.Expect[*jobIdle](j.probe); err != nil {
		return fmt.Errorf("liveness: pending checkpoints never finished: %w", err)
	}
	if e.sim != nil {
		if e.ticker != nil {
			e.sys.Stop(e.ticker)
		}
		if err := e.sim.RunUntilIdle(); err != nil {
			return err
		}
	}
	q, err := e.settle(j)
	if err != nil {
		return err
	}
	if err := e.audit(j, q, false); err != nil {
		return err
	}
	if err := e.ext.check(e.model.out); err != nil {
		return err
	}
	e.logf("audit passed: %d blobs live, %d leaked", len(q.LiveBlobs), len(q.Leaked))
	return e.finalRestore(j)
}

// settle drains every Store actor and the uploader and asks the
// coordinator for its view once nothing is in flight.
func (e *env) settle(j *job) (*barrier.Quiet, error) {
	for _, pid := range append(append(slices.Clone(j.stores), j.taps...), j.uploader) {
		e.sys.Request(pid, &barrier.Drain{}, j.probe.PID())
		if _, err := actors.Expect[*barrier.Drained](j.probe); err != nil {
			return nil, fmt.Errorf("draining %s: %w", pid.Id, err)
		}
	}
	e.sys.Request(j.coord, &barrier.Quiesce{}, j.probe.PID())
	q, err := actors.Expect[*barrier.Quiet](j.probe)
	if err != nil {
		return nil, fmt.Errorf("quiesce: %w", err)
	}
	return q, nil
}

// audit is the orphan-file auditor: every blob is referenced by a retained
// checkpoint or reported leaked (exact, with exact, after a restart's
// sweep), every referenced blob exists, and no chk-<n>/ directory is left.
func (e *env) audit(j *job, q *barrier.Quiet, exact bool) error {
	if len(q.Pending) > 0 {
		return fmt.Errorf("audit: checkpoints %v still pending", q.Pending)
	}
	names := e.fblob.Names()
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	live := map[string]bool{}
	for _, n := range q.LiveBlobs {
		live[n] = true
		if !have[n] {
			return fmt.Errorf("nothing lost: %s, referenced by a retained checkpoint, is not in the blob store", n)
		}
	}
	leaked := map[string]bool{}
	if !exact {
		for _, n := range q.Leaked {
			leaked[n] = true
		}
	}
	for _, n := range names {
		if !live[n] && !leaked[n] {
			return fmt.Errorf("nothing leaked: orphan blob %s (retained %v)", n, q.Retained)
		}
	}
	for _, wd := range j.workDirs {
		entries, err := e.fio.List(wd)
		if err != nil {
			return fmt.Errorf("audit: list %s: %w", wd, err)
		}
		for _, n := range entries {
			if strings.HasPrefix(n, "chk-") {
				return fmt.Errorf("nothing leaked: local checkpoint directory %s/%s left behind", wd, n)
			}
		}
	}
	return nil
}

// finalRestore restarts the coordinator without faults: its sweep must
// leave exactly the live blobs, and the newest checkpoint must restore to the
// failure-free run's final state at a fresh parallelism.
func (e *env) finalRestore(j *job) error {
	e.crashJob(j)
	e.fblob.SetFaults(faultblob.Faults{})
	if e.ffs != nil {
		e.ffs.SetFaults(faultfs.Faults{})
	}
	p := 1 + e.rng.IntN(min(3, e.maxP))
	r, err := e.startCoordinator(p)
	defer e.crashJob(r)
	if err != nil {
		return fmt.Errorf("final recovery: %w", err)
	}
	if r.from == nil {
		return errors.New("nothing lost: final recovery found no checkpoint")
	}
	q, err := e.settle(r)
	if err != nil {
		return err
	}
	if err := e.audit(r, q, true); err != nil {
		return fmt.Errorf("after the restart's sweep: %w", err)
	}
	plans, err := barrier.PlanRestore(r.from, opKeyed, p)
	if err != nil {
		return err
	}
	tasks, _, err := e.openKeyed(r, r.from, plans, p)
	if err != nil {
		return fmt.Errorf("final restore of checkpoint %d at p=%d: %w", r.from.ID, p, err)
	}
	if err := e.compareRestored(r.from, tasks, plans, len(e.stream.events)); err != nil {
		return err
	}
	e.logf("final restore of checkpoint %d at p=%d matches the failure-free state", r.from.ID, p)
	return nil
}

// compareRestored checks every key of the stores restored from checkpoint
// from against the failure-free model after the first offset events.
func (e *env) compareRestored(from *barrier.Metadata, tasks []*keyedTask, plans []barrier.SubtaskRestore, offset int) error {
	want := runModel(&stream{events: e.stream.events[:offset]}).keys
	for key := int64(0); key < int64(e.keys); key++ {
		i := slices.IndexFunc(plans, func(pl barrier.SubtaskRestore) bool { return pl.KeyGroups.Contains(keyGroupOf(key, e.maxP)) })
		got, err := tasks[i].op.stateOf(key)
		if err != nil {
			return fmt.Errorf("restore of checkpoint %d: read key %d: %w", from.ID, key, err)
		}
		if !sameState(got, want[key]) {
			return fmt.Errorf("exactly-once: key %d restored from checkpoint %d at p=%d holds %+v, the failure-free run holds %+v after %d events",
				key, from.ID, len(plans), got, want[key], offset)
		}
	}
	return nil
}
