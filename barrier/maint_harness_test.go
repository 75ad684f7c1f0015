package barrier_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

var syncMapLayout = subtask.Layout{
	Name:  "m",
	Kind:  subtask.KindMap,
	Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
	Sub:   []subtask.Column{{Name: "s", Type: table.BigInt().NotNull()}},
	Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
}

// maintJob is a job (see startJob) whose subtasks keep a value state and a
// map state on the paimon backend, each table maintained by the Store
// actor's maintenance.
type maintJob struct {
	*job
	backends []*subtask.PaimonBackend
	maps     []*subtask.MapState
}

type maintConfig struct {
	jobConfig
	maint compaction.Config
	// backpressure receives the stores' verdicts.
	backpressure *actor.PID
	// trace receives the simulation's steps.
	trace io.Writer
	// ttl is the value state's TTL in milliseconds.
	ttl int64
	// restore restores the job from this checkpoint.
	restore *barrier.Metadata
	// maxRestarts is the simulated system's actors.Options.MaxRestarts.
	maxRestarts int
}

func startMaintJob(t testing.TB, blobs *memBlobs, fs *faultyFS, root string, cfg maintConfig) *maintJob {
	t.Helper()
	c := cfg.jobConfig
	c.backend = barrier.BackendPaimon
	if c.maxP == 0 {
		c.maxP = 10
	}
	if c.parallelism == 0 {
		c.parallelism = 1
	}
	if c.timeout == 0 {
		c.timeout = time.Minute
	}
	if c.retry.Backoff == 0 {
		c.retry.Backoff = time.Millisecond
	}
	sys := actors.NewSystem(actors.Options{ExecutorLimit: 8})
	var sim *actors.Sim
	if c.sim != 0 {
		sim = actors.NewSim(actors.SimOptions{Options: actors.Options{Seed: c.sim, MaxRestarts: cfg.maxRestarts}, Trace: cfg.trace})
		sys = sim.System()
	}
	j := &maintJob{job: &job{t: t, cfg: c, sys: sys, sim: sim, blobs: blobs, fs: fs, root: root}}
	t.Cleanup(j.stop)
	probe := func(name string) *actors.Probe {
		p, err := actors.NewProbe(sys, name)
		if err != nil {
			t.Fatal(err)
		}
		p.SetWait(probeWait)
		return p
	}
	j.ctl, j.trig, j.notes = probe("ctl"), probe("trig"), probe("notes")
	var err error
	j.uploader, err = sys.Spawn("uploader", barrier.NewUploader(sys, barrier.UploaderConfig{Blobs: blobs, FileIO: fs, Parallelism: 4, Retry: c.retry}))
	if err != nil {
		t.Fatal(err)
	}
	j.coord, err = sys.Spawn("coordinator", barrier.NewCoordinator(sys, barrier.CoordinatorConfig{
		JobID: "job", Blobs: blobs, Retain: c.retain, MaxConcurrent: c.concurrent, Timeout: c.timeout, TriggerTarget: j.trig.PID(), RecoveredTo: j.ctl.PID(),
		Operators: []barrier.OperatorSpec{{ID: opID, Parallelism: c.parallelism, MaxParallelism: c.maxP}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if j.recovered, err = actors.Expect[*barrier.Recovered](j.ctl); err != nil || j.recovered.Err != nil {
		t.Fatalf("recover: %v %v", err, j.recovered)
	}
	var plans []barrier.SubtaskRestore
	if cfg.restore != nil {
		if plans, err = barrier.PlanRestore(cfg.restore, opID, c.parallelism); err != nil {
			t.Fatal(err)
		}
	}
	for i := range c.parallelism {
		tk := &task{idx: i, kg: keygroup.RangeForSubtask(c.maxP, c.parallelism, i), syncs: probe(fmt.Sprintf("syncs-%d", i)), stats: probe(fmt.Sprintf("stats-%d", i))}
		dir, err := makeRunDir(root, i)
		if err != nil {
			t.Fatal(err)
		}
		tk.workDir = filepath.Join(dir, "work")
		entropy := io.Reader(rand.Reader)
		var tableOpts []table.Option
		if sim != nil {
			entropy = mrand.NewChaCha8([32]byte{byte(c.sim), byte(i)})
			tableOpts = append(tableOpts, table.WithRand(mrand.NewChaCha8([32]byte{byte(c.sim), byte(i), 1})))
		}
		id, err := barrier.NewBackendID(entropy)
		if err != nil {
			t.Fatal(err)
		}
		var history *barrier.History
		var pb *subtask.PaimonBackend
		var restored *barrier.RestoredStore
		if cfg.restore != nil {
			restored, err = barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{
				Metadata: cfg.restore, Plan: plans[i], Backend: barrier.BackendPaimon, Blobs: blobs, FileIO: fs,
				Dir: filepath.Join(dir, "state"), Paimon: subtask.PaimonOptions{TableOptions: tableOpts}, BackendID: id,
			})
			if err != nil {
				t.Fatal(err)
			}
			j.restored = append(j.restored, restored)
			pb, history = restored.Backend.(*subtask.PaimonBackend), restored.History
		} else {
			if history, err = barrier.NewHistory(id); err != nil {
				t.Fatal(err)
			}
			pb, err = subtask.OpenPaimon(filepath.Join(dir, "state", "paimon"), subtask.PaimonOptions{FileIO: fs, TableOptions: tableOpts})
			if err != nil {
				t.Fatal(err)
			}
		}
		tk.backend, tk.fence = pb, barrier.NewStoreFence()
		j.backends = append(j.backends, pb)
		tk.store = subtask.NewStore(pb)
		vl := valueLayout
		vl.TTL = cfg.ttl
		if tk.values, err = tk.store.Value(vl); err != nil {
			t.Fatal(err)
		}
		m, err := tk.store.Map(syncMapLayout)
		if err != nil {
			t.Fatal(err)
		}
		j.maps = append(j.maps, m)
		if restored != nil {
			if err := restored.Finish(tk.store, fs); err != nil {
				t.Fatal(err)
			}
		}
		maint := cfg.maint
		maint.CheckInvariants = true
		tk.pid, err = sys.Spawn(fmt.Sprintf("store-%d", i), barrier.NewStoreActor(sys, barrier.StoreConfig{
			Operator: opID, Subtask: i, KeyGroups: tk.kg, WorkDir: tk.workDir, FileIO: fs,
			Uploader: j.uploader, Coordinator: j.coord, History: history, Stats: tk.stats.PID(),
			Maintenance: maint, Backpressure: cfg.backpressure, Fence: tk.fence,
		}))
		if err != nil {
			t.Fatal(err)
		}
		tk.relay, err = sys.Spawn(fmt.Sprintf("relay-%d", i), func() actor.Actor { return &relay{tk: tk} })
		if err != nil {
			t.Fatal(err)
		}
		sys.Send(j.coord, &barrier.Subscribe{PID: tk.relay})
		j.tasks = append(j.tasks, tk)
	}
	sys.Send(j.coord, &barrier.Subscribe{PID: j.notes.PID()})
	return j
}

// putMap sets entry sub of key k to v at k's owner.
func (j *maintJob) putMap(k, sub, v int64) {
	j.t.Helper()
	tk := j.owner(k)
	es, err := j.maps[tk.idx].GetBatch([]subtask.Key{keyOf(k, j.cfg.maxP)}, nil)
	if err != nil {
		j.t.Fatal(err)
	}
	es[0].Put(subtask.Row{subtask.Int(sub)}, subtask.Row{subtask.Int(v)})
	tk.store.EndBatch()
}

// getMap reads the entries of key k: sub -> v.
func (j *maintJob) getMap(k int64) map[int64]int64 {
	j.t.Helper()
	tk := j.owner(k)
	es, err := j.maps[tk.idx].GetBatch([]subtask.Key{keyOf(k, j.cfg.maxP)}, nil)
	if err != nil {
		j.t.Fatal(err)
	}
	out := map[int64]int64{}
	for sub, v := range es[0].All() {
		out[sub[0].Int()] = v[0].Int()
	}
	tk.store.EndBatch()
	return out
}

// snapshotFiles lists the files of snapshot id of a task's table: its
// metadata files, live data files and index files, table-relative.
func (j *maintJob) snapshotFiles(tk int, name string, id int64) []string {
	j.t.Helper()
	tbl, ok := j.backends[tk].Table(name)
	if !ok {
		j.t.Fatalf("no table %q", name)
	}
	meta, err := tbl.SnapshotMetaFiles(id)
	if err != nil {
		j.t.Fatal(err)
	}
	var out []string
	for _, f := range meta {
		out = append(out, f.Path)
	}
	files, index, err := tbl.LiveFiles(id)
	if err != nil {
		j.t.Fatal(err)
	}
	for _, f := range files {
		dir, _ := tbl.BucketPath(f.Partition, f.Bucket)
		out = append(out, path.Join(dir, f.File.FileName))
	}
	for _, e := range index {
		out = append(out, path.Join("index", e.FileName))
	}
	return out
}
