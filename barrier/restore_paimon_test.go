package barrier_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// The four store shapes of the paimon restore tests.
var (
	paimonLayouts = []subtask.Layout{valueLayout, {
		Name: "l", Kind: subtask.KindList,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
	}, {
		Name: "m", Kind: subtask.KindMap,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub:   []subtask.Column{{Name: "s", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
	}, {
		Name: "t", Kind: subtask.KindTime,
		Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []subtask.Column{{Name: "v", Type: table.BigInt()}},
	}}
)

// noSyncFS is the local file system without fsync: the paimon tests
// write many small files, and durability is not what they test.
type noSyncFS struct{ table.FileIO }

type noSyncFile struct{ table.WritableFile }

func (noSyncFile) Sync() error { return nil }

func (f noSyncFS) Create(p string) (table.WritableFile, error) {
	w, err := f.FileIO.Create(p)
	if err != nil {
		return nil, err
	}
	return noSyncFile{w}, nil
}

func (noSyncFS) SyncDir(string) error { return nil }

var paimonFS table.FileIO = noSyncFS{table.NewLocalFileIO()}

// paimonModel is what the four states of a paimon test store hold.
type paimonModel struct {
	values map[int64]int64
	lists  map[int64][]int64
	maps   map[int64]map[int64]int64
	times  map[int64]map[[2]int64]int64 // (time, seq) → value
}

func newPaimonModel() *paimonModel {
	return &paimonModel{values: map[int64]int64{}, lists: map[int64][]int64{}, maps: map[int64]map[int64]int64{}, times: map[int64]map[[2]int64]int64{}}
}

// paimonSetup is what the subtasks of a paimon test job share.
type paimonSetup struct {
	maxP    int
	layouts []subtask.Layout // one of each kind at most
	fio     table.FileIO
}

// fourStates is the setup of the restore tests: the four store shapes.
func fourStates(maxP int) paimonSetup {
	return paimonSetup{maxP: maxP, layouts: paimonLayouts, fio: paimonFS}
}

// paimonTask is one subtask over the paimon backend, checkpointed by hand the
// way the layout contract describes a paimon checkpoint: per table, the
// files of the maintenance round's snapshot.
type paimonTask struct {
	t testing.TB
	paimonSetup
	idx      int
	kg       keygroup.Range
	backend  *subtask.PaimonBackend
	store    *subtask.Store
	values   *subtask.ValueState
	lists    *subtask.ListState
	maps     *subtask.MapState
	times    *subtask.TimeState
	history  *barrier.History
	sessions map[string]*compaction.Session
	blobOf   map[barrier.FileKey]string // every file this task's checkpoints registered
}

// newPaimonTask registers the setup's states over b. restored, when set, is
// the restore that produced b: its history becomes the task's and Finish
// runs.
func newPaimonTask(t testing.TB, setup paimonSetup, idx int, kg keygroup.Range, b subtask.Backend, restored *barrier.RestoredStore) *paimonTask {
	t.Helper()
	pt := &paimonTask{t: t, paimonSetup: setup, idx: idx, kg: kg, backend: b.(*subtask.PaimonBackend), store: subtask.NewStore(b),
		sessions: map[string]*compaction.Session{}, blobOf: map[barrier.FileKey]string{}}
	t.Cleanup(pt.close)
	pt.store.SetNow(1)
	for _, l := range setup.layouts {
		var err error
		switch l.Kind {
		case subtask.KindValue:
			pt.values, err = pt.store.Value(l)
		case subtask.KindList:
			pt.lists, err = pt.store.List(l)
		case subtask.KindMap:
			pt.maps, err = pt.store.Map(l)
		case subtask.KindTime:
			pt.times, err = pt.store.Time(l)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if restored != nil {
		if err := restored.Finish(pt.store, setup.fio); err != nil {
			t.Fatal(err)
		}
		pt.history = restored.History
		return pt
	}
	id, err := barrier.NewBackendID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if pt.history, err = barrier.NewHistory(id); err != nil {
		t.Fatal(err)
	}
	return pt
}

func (pt *paimonTask) close() {
	for _, s := range pt.sessions {
		s.Close()
	}
	pt.sessions = map[string]*compaction.Session{}
	pt.backend.Close()
}

// apply writes a round of changes for keys of the task's key groups into the
// store and the model: round 0 creates every state of every key, later rounds
// update a third of the keys and delete a seventh.
func (pt *paimonTask) apply(m *paimonModel, keys []int64, round int64) {
	pt.t.Helper()
	var mine []int64
	for _, k := range keys {
		if pt.kg.Contains(keygroup.ForKeyHash(int32(k), pt.maxP)) && (round == 0 || k%3 == round%3 || k%7 == 0) {
			mine = append(mine, k)
		}
	}
	for at := 0; at < len(mine); at += 500 {
		batch := mine[at:min(at+500, len(mine))]
		ks := make([]subtask.Key, len(batch))
		for i, k := range batch {
			ks[i] = keyOf(k, pt.maxP)
		}
		entries, err := pt.maps.GetBatch(ks, nil)
		if err != nil {
			pt.t.Fatal(err)
		}
		for i, k := range batch {
			key := ks[i]
			if round > 0 && k%7 == 0 {
				pt.values.Delete(key)
				pt.lists.Delete(key)
				entries[i].Clear()
				pt.times.Delete(key, k, 0)
				delete(m.values, k)
				delete(m.lists, k)
				delete(m.maps, k)
				delete(m.times[k], [2]int64{k, 0})
				continue
			}
			v := k*10 + round
			pt.values.Put(key, subtask.Row{subtask.Int(v)})
			pt.lists.Put(key, []subtask.Row{{subtask.Int(v)}, {subtask.Int(-v)}})
			entries[i].Put(subtask.Row{subtask.Int(round)}, subtask.Row{subtask.Int(v)})
			pt.times.Put(key, k+round, round, subtask.Row{subtask.Int(v)})
			m.values[k] = v
			m.lists[k] = []int64{v, -v}
			if m.maps[k] == nil {
				m.maps[k] = map[int64]int64{}
			}
			m.maps[k][round] = v
			if m.times[k] == nil {
				m.times[k] = map[[2]int64]int64{}
			}
			m.times[k][[2]int64{k + round, round}] = v
		}
		pt.store.EndBatch()
	}
}

// checkpoint flushes the store, runs each table's maintenance round, lists
// the round's snapshot per the layout contract, decides reuse with the
// task's history, uploads, and confirms. It returns the subtask's state (with
// placeholders resolved, as the registry would) and the decision.
func (pt *paimonTask) checkpoint(blobs *memBlobs, id barrier.CheckpointID) (barrier.SubtaskState, *barrier.Decision) {
	pt.t.Helper()
	if _, err := pt.store.Flush(int64(id)); err != nil {
		pt.t.Fatal(err)
	}
	var tables []barrier.TableFiles
	for _, l := range pt.layouts {
		tbl, ok := pt.backend.Table(l.Name)
		if !ok {
			pt.t.Fatalf("table %q not registered", l.Name)
		}
		latest, ok, err := tbl.LatestSnapshotID()
		if err != nil {
			pt.t.Fatal(err)
		}
		if !ok {
			continue
		}
		s := pt.sessions[l.Name]
		if s == nil {
			if s, err = compaction.NewSession(tbl, compaction.Config{CheckInvariants: true}, 1<<40); err != nil {
				pt.t.Fatal(err)
			}
			pt.sessions[l.Name] = s
		}
		res, err := s.Barrier(latest, pt.store.Now())
		if err != nil {
			pt.t.Fatal(err)
		}
		if err := s.Check(); err != nil {
			pt.t.Fatal(err)
		}
		tables = append(tables, listPaimonCheckpoint(pt.t, l.Name, tbl, res.SnapshotID))
	}
	if err := pt.store.Repin(); err != nil {
		pt.t.Fatal(err)
	}
	d, err := pt.history.Decide(id, barrier.KindCheckpoint, tables)
	if err != nil {
		pt.t.Fatal(err)
	}
	for _, u := range d.Uploads {
		f, err := os.Open(u.Source)
		if err != nil {
			pt.t.Fatal(err)
		}
		err = blobs.Put(context.Background(), u.Blob, f)
		f.Close()
		if err != nil {
			pt.t.Fatal(err)
		}
	}
	pt.history.Acknowledged(d)
	if !pt.history.Confirm(id) {
		pt.t.Fatalf("checkpoint %d not confirmed", id)
	}
	st := barrier.SubtaskState{Index: pt.idx, KeyGroups: pt.kg, Backend: barrier.BackendPaimon, BackendID: pt.history.BackendID(),
		Tables: slices.Clone(d.Tables)}
	for ti := range st.Tables {
		ts := &st.Tables[ti]
		ts.Files = slices.Clone(ts.Files)
		for fi := range ts.Files {
			f := &ts.Files[fi]
			key := st.FileKey(ts.Name, *f)
			if f.Uploaded {
				pt.blobOf[key] = f.Blob
				continue
			}
			blob, ok := pt.blobOf[key]
			if !ok {
				pt.t.Fatalf("placeholder %v names no registered file", key)
			}
			f.Blob = blob
		}
	}
	return st, d
}

// listPaimonCheckpoint lists the files of snapshot id of a table: its schema,
// the snapshot, the manifest lists and manifests it names, its index
// manifest and its live data and index files.
func listPaimonCheckpoint(t testing.TB, name string, tbl *table.Table, id int64) barrier.TableFiles {
	t.Helper()
	fio := tbl.FileIO()
	snap, err := tbl.Snapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	rels := []string{fmt.Sprintf("schema/schema-%d", snap.SchemaID), fmt.Sprintf("snapshot/snapshot-%d", id)}
	for _, list := range []string{snap.BaseManifestList, snap.DeltaManifestList} {
		rel := "manifest/" + list
		data, err := fio.ReadFile(path.Join(tbl.Dir(), rel))
		if err != nil {
			t.Fatal(err)
		}
		metas, err := table.DecodeManifestList(rel, data)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
		for _, m := range metas {
			rels = append(rels, "manifest/"+m.FileName)
		}
	}
	if snap.IndexManifest != "" {
		rels = append(rels, "manifest/"+snap.IndexManifest)
	}
	entries, index, err := tbl.LiveFiles(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := tbl.BucketPath(e.Partition, e.Bucket)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, b+"/"+e.File.FileName)
	}
	for _, e := range index {
		rels = append(rels, "index/"+e.FileName)
	}
	slices.Sort(rels)
	rels = slices.Compact(rels)
	out := barrier.TableFiles{Name: name, SnapshotID: id}
	for _, rel := range rels {
		src := path.Join(tbl.Dir(), rel)
		size, err := fio.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		out.Files = append(out.Files, barrier.StateFile{Table: name, Path: rel, Size: size, Source: src, Immutable: true})
	}
	return out
}

// paimonJob is a paimon operator of p subtasks checkpointed by hand.
type paimonJob struct {
	t testing.TB
	paimonSetup
	tasks []*paimonTask
}

func newPaimonJob(t testing.TB, setup paimonSetup, p int) *paimonJob {
	t.Helper()
	j := &paimonJob{t: t, paimonSetup: setup}
	for i := range p {
		b, err := subtask.OpenPaimon(barrier.PaimonRoot(filepath.Join(t.TempDir(), "state")), subtask.PaimonOptions{FileIO: setup.fio})
		if err != nil {
			t.Fatal(err)
		}
		j.tasks = append(j.tasks, newPaimonTask(t, setup, i, keygroup.RangeForSubtask(setup.maxP, p, i), b, nil))
	}
	return j
}

// restorePaimonJob restores m at parallelism p into fresh directories.
func restorePaimonJob(t testing.TB, setup paimonSetup, blobs *memBlobs, m *barrier.Metadata, p int) (*paimonJob, []*barrier.RestoredStore) {
	t.Helper()
	plans, err := barrier.PlanRestore(m, opID, p)
	if err != nil {
		t.Fatal(err)
	}
	j := &paimonJob{t: t, paimonSetup: setup}
	var rs []*barrier.RestoredStore
	for i, plan := range plans {
		r, err := restorePaimon(setup.fio, blobs, m, plan, filepath.Join(t.TempDir(), "state"))
		if err != nil {
			t.Fatal(err)
		}
		if r.KeyGroups != plan.KeyGroups || r.Aligned != plan.Aligned {
			t.Fatalf("subtask %d restored %v aligned %t, planned %v %t", i, r.KeyGroups, r.Aligned, plan.KeyGroups, plan.Aligned)
		}
		rs = append(rs, r)
		pt := newPaimonTask(t, setup, i, plan.KeyGroups, r.Backend, r)
		if r.Aligned {
			plan.Sources[0].State.Files(func(k barrier.FileKey, f barrier.FileRef) { pt.blobOf[k] = f.Blob })
		}
		j.tasks = append(j.tasks, pt)
	}
	return j, rs
}

func restorePaimon(fio table.FileIO, blobs *memBlobs, m *barrier.Metadata, plan barrier.SubtaskRestore, dir string) (*barrier.RestoredStore, error) {
	id, err := barrier.NewBackendID(rand.Reader)
	if err != nil {
		return nil, err
	}
	return barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{Metadata: m, Plan: plan, Backend: barrier.BackendPaimon,
		Blobs: blobs, FileIO: fio, Dir: dir, BackendID: id})
}

func (j *paimonJob) apply(m *paimonModel, keys []int64, round int64) {
	for _, pt := range j.tasks {
		pt.apply(m, keys, round)
	}
}

// checkpoint checkpoints every task and returns the metadata.
func (j *paimonJob) checkpoint(blobs *memBlobs, id barrier.CheckpointID) (*barrier.Metadata, []*barrier.Decision) {
	j.t.Helper()
	op := barrier.OperatorState{ID: opID, Parallelism: len(j.tasks), MaxParallelism: j.maxP}
	var ds []*barrier.Decision
	for _, pt := range j.tasks {
		st, d := pt.checkpoint(blobs, id)
		op.Subtasks = append(op.Subtasks, st)
		ds = append(ds, d)
	}
	m := &barrier.Metadata{ID: id, Kind: barrier.KindCheckpoint, TimestampMillis: 1, JobID: "job", Operators: []barrier.OperatorState{op}}
	if err := m.Validate(); err != nil {
		j.t.Fatal(err)
	}
	return m, ds
}

// check reads every key at every task: each task holds exactly the model's
// rows of its own key groups, nothing else.
func (j *paimonJob) check(m *paimonModel, keys []int64) {
	j.t.Helper()
	for _, pt := range j.tasks {
		pt.check(m, keys)
	}
}

func (pt *paimonTask) check(m *paimonModel, keys []int64) {
	t := pt.t
	t.Helper()
	owned := func(k int64) bool { return pt.kg.Contains(keygroup.ForKeyHash(int32(k), pt.maxP)) }
	for at := 0; at < len(keys); at += 500 {
		batch := keys[at:min(at+500, len(keys))]
		ks := make([]subtask.Key, len(batch))
		for i, k := range batch {
			ks[i] = keyOf(k, pt.maxP)
		}
		values, err := pt.values.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		lists, err := pt.lists.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := pt.maps.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range batch {
			wantV, hasV := m.values[k]
			wantL, wantM := m.lists[k], m.maps[k]
			if !owned(k) {
				hasV, wantL, wantM = false, nil, nil
			}
			if got := values[i]; (got != nil) != hasV || hasV && got[0].Int() != wantV {
				t.Fatalf("task %d %v: value of key %d is %v, want %d (%t)", pt.idx, pt.kg, k, got, wantV, hasV)
			}
			var gotL []int64
			for _, r := range lists[i] {
				gotL = append(gotL, r[0].Int())
			}
			if !slices.Equal(gotL, wantL) {
				t.Fatalf("task %d %v: list of key %d is %v, want %v", pt.idx, pt.kg, k, gotL, wantL)
			}
			gotM := map[int64]int64{}
			for sub, v := range entries[i].All() {
				gotM[sub[0].Int()] = v[0].Int()
			}
			if !maps.Equal(gotM, wantM) {
				t.Fatalf("task %d %v: map of key %d is %v, want %v", pt.idx, pt.kg, k, gotM, wantM)
			}
		}
		pt.store.EndBatch()
	}
	got := map[int64]map[[2]int64]int64{}
	err := pt.times.Scan(math.MinInt64, math.MaxInt64, func(key subtask.Key, r subtask.TimeRow) bool {
		k := key.Cols[0].Int()
		if got[k] == nil {
			got[k] = map[[2]int64]int64{}
		}
		if _, dup := got[k][[2]int64{r.Time, r.Seq}]; dup {
			t.Fatalf("task %d: time row (%d, %d) of key %d read twice", pt.idx, r.Time, r.Seq, k)
		}
		got[k][[2]int64{r.Time, r.Seq}] = r.Value[0].Int()
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	pt.store.EndBatch()
	want := map[int64]map[[2]int64]int64{}
	for k, rows := range m.times {
		if owned(k) && len(rows) > 0 {
			want[k] = rows
		}
	}
	if !maps.EqualFunc(got, want, func(a, b map[[2]int64]int64) bool { return maps.Equal(a, b) }) {
		t.Fatalf("task %d %v: time rows of %d keys, want %d keys", pt.idx, pt.kg, len(got), len(want))
	}
}

// paimonHistory builds a checkpoint of p subtasks whose tables carry two
// rounds of changes (so deletion vectors and several levels), and returns
// the last checkpoint's metadata and the model.
func paimonHistory(t *testing.T, blobs *memBlobs, p, maxP int, keys []int64) (*barrier.Metadata, *paimonModel) {
	t.Helper()
	j := newPaimonJob(t, fourStates(maxP), p)
	m := newPaimonModel()
	j.apply(m, keys, 0)
	j.checkpoint(blobs, 1)
	j.apply(m, keys, 1)
	md, _ := j.checkpoint(blobs, 2)
	j.check(m, keys)
	for _, pt := range j.tasks {
		pt.close()
	}
	return md, m
}

func testKeys(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i + 1)
	}
	return keys
}

// An aligned restore returns every row of the four store shapes, adopts the
// checkpoint's files as its reuse base, and the tables go on: writes, the
// maintenance round of a new session (one walk of the adopted files) and a
// second restore from the next checkpoint.
func TestPaimonRestoreAligned(t *testing.T) {
	blobs, keys := newMemBlobs(), testKeys(800)
	m, model := paimonHistory(t, blobs, 2, 128, keys)
	j, rs := restorePaimonJob(t, fourStates(128), blobs, m, 2)
	j.check(model, keys)
	for i, r := range rs {
		var files, bytes int64
		m.Operators[0].Subtasks[i].Files(func(_ barrier.FileKey, f barrier.FileRef) { files++; bytes += f.Size })
		if !r.Aligned || int64(r.History.BaseLen()) != files || r.History.Confirmed() != m.ID || r.BytesRead != bytes {
			t.Fatalf("subtask %d: aligned %t, base of %d files from %d, %d bytes read; want %d files from %d, %d bytes",
				i, r.Aligned, r.History.BaseLen(), r.History.Confirmed(), r.BytesRead, files, m.ID, bytes)
		}
	}
	j.apply(model, keys, 2)
	m3, _ := j.checkpoint(blobs, 3)
	j.check(model, keys)
	for _, pt := range j.tasks {
		pt.close()
	}
	j, _ = restorePaimonJob(t, fourStates(128), blobs, m3, 2)
	j.check(model, keys)
}

// The first checkpoint after an aligned restore uploads none of the files it
// adopted: without writes it uploads nothing, with writes only new files.
func TestPaimonRestoreReusesAdopted(t *testing.T) {
	blobs, keys := newMemBlobs(), testKeys(600)
	m, model := paimonHistory(t, blobs, 2, 128, keys)
	j, _ := restorePaimonJob(t, fourStates(128), blobs, m, 2)
	_, ds := j.checkpoint(blobs, 3)
	for i, d := range ds {
		if len(d.Uploads) != 0 {
			t.Fatalf("subtask %d: an unchanged restored store uploads %d files: %v", i, len(d.Uploads), d.Uploads)
		}
	}
	j.apply(model, keys, 2)
	m4, ds := j.checkpoint(blobs, 4)
	for i, d := range ds {
		adopted := map[string]bool{}
		m.Operators[0].Subtasks[i].Files(func(k barrier.FileKey, _ barrier.FileRef) { adopted[k.Table+"/"+k.Path] = true })
		reused := 0
		for _, ts := range d.Tables {
			for _, f := range ts.Files {
				if f.Uploaded && adopted[ts.Name+"/"+f.Path] {
					t.Fatalf("subtask %d: checkpoint 4 uploads adopted file %s/%s", i, ts.Name, f.Path)
				}
				if !f.Uploaded {
					reused++
				}
			}
		}
		if len(d.Uploads) == 0 || reused == 0 {
			t.Fatalf("subtask %d: %d uploads, %d reused files after writes", i, len(d.Uploads), reused)
		}
	}
	j.check(model, keys)
	for _, pt := range j.tasks {
		pt.close()
	}
	j, _ = restorePaimonJob(t, fourStates(128), blobs, m4, 2)
	j.check(model, keys)
}

// A rescale returns exactly the rows of each new key-group range: every key
// at its owner, nowhere else, and the union is the original state.
func TestPaimonRestoreRescale(t *testing.T) {
	for _, c := range [][2]int{{1, 2}, {2, 3}, {3, 2}} {
		t.Run(fmt.Sprintf("%dto%d", c[0], c[1]), func(t *testing.T) {
			blobs, keys := newMemBlobs(), testKeys(600)
			m, model := paimonHistory(t, blobs, c[0], 128, keys)
			j, rs := restorePaimonJob(t, fourStates(128), blobs, m, c[1])
			want, _ := keygroup.Ranges(128, c[1])
			for i, pt := range j.tasks {
				if pt.kg != want[i] || rs[i].Aligned {
					t.Fatalf("subtask %d owns %v (aligned %t), want %v", i, pt.kg, rs[i].Aligned, want[i])
				}
				names, err := paimonFS.List(filepath.Dir(pt.backend.Root()))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(names, []string{"paimon"}) {
					t.Fatalf("subtask %d leaves %v in its state directory", i, names)
				}
			}
			j.check(model, keys)
			// The rescaled tables checkpoint and restore like any other.
			j.apply(model, keys, 2)
			m2, _ := j.checkpoint(blobs, 3)
			j.check(model, keys)
			for _, pt := range j.tasks {
				pt.close()
			}
			j, _ = restorePaimonJob(t, fourStates(128), blobs, m2, c[1])
			j.check(model, keys)
		})
	}
}

// A missing blob, a corrupt file or a file the checkpoint lacks fails the
// restore with an error naming the file, and a restore never writes into a
// table directory that holds files.
func TestPaimonRestoreBadFiles(t *testing.T) {
	blobs, keys := newMemBlobs(), testKeys(300)
	m, model := paimonHistory(t, blobs, 1, 128, keys)
	plans, err := barrier.PlanRestore(m, opID, 1)
	if err != nil {
		t.Fatal(err)
	}
	st := &m.Operators[0].Subtasks[0]
	find := func(table, prefix string) barrier.FileRef {
		for _, ts := range st.Tables {
			for _, f := range ts.Files {
				if ts.Name == table && strings.HasPrefix(f.Path, prefix) {
					return f
				}
			}
		}
		t.Fatalf("no %s/%s* in the checkpoint", table, prefix)
		return barrier.FileRef{}
	}
	data, manifest := find("v", "bucket-0/data-"), find("m", "manifest/manifest-")
	swap := func(f barrier.FileRef, content []byte) func() {
		blobs.mu.Lock()
		defer blobs.mu.Unlock()
		old := blobs.blobs[f.Blob]
		if content == nil {
			delete(blobs.blobs, f.Blob)
		} else {
			blobs.blobs[f.Blob] = content
		}
		return func() {
			blobs.mu.Lock()
			defer blobs.mu.Unlock()
			blobs.blobs[f.Blob] = old
		}
	}
	garbage := func(f barrier.FileRef) []byte { return []byte(strings.Repeat("x", int(f.Size))) }
	for _, c := range []struct {
		name  string
		spoil func() func()
		want  string
	}{
		{"missing blob", func() func() { return swap(data, nil) }, data.Path},
		{"corrupt data file", func() func() { return swap(data, garbage(data)) }, data.Path},
		{"truncated data file", func() func() { return swap(data, garbage(data)[1:]) }, data.Path},
		{"corrupt manifest", func() func() { return swap(manifest, garbage(manifest)) }, path.Base(manifest.Path)},
		{"file missing from the checkpoint", func() func() {
			ts := &st.Tables[0]
			files := ts.Files
			ts.Files = slices.DeleteFunc(slices.Clone(files), func(f barrier.FileRef) bool { return f.Path == data.Path })
			return func() { ts.Files = files }
		}, data.Path},
	} {
		t.Run(c.name, func(t *testing.T) {
			undo := c.spoil()
			defer undo()
			r, err := restorePaimon(paimonFS, blobs, m, plans[0], filepath.Join(t.TempDir(), "state"))
			if err == nil {
				r.Backend.Close()
				t.Fatal("restore succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %s", err, c.want)
			}
		})
	}

	dir := filepath.Join(t.TempDir(), "state")
	r, err := restorePaimon(paimonFS, blobs, m, plans[0], dir)
	if err != nil {
		t.Fatal(err)
	}
	pt := newPaimonTask(t, fourStates(128), 0, r.KeyGroups, r.Backend, r)
	st.Files(func(k barrier.FileKey, f barrier.FileRef) { pt.blobOf[k] = f.Blob })
	j := &paimonJob{t: t, paimonSetup: fourStates(128), tasks: []*paimonTask{pt}}
	j.apply(model, keys, 2)
	j.checkpoint(blobs, 3)
	if _, err := restorePaimon(paimonFS, blobs, m, plans[0], dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a directory with tables: %v", err)
	}
	j.check(model, keys)
}

// A paimon checkpoint does not restore onto another backend, nor another
// backend's onto paimon.
func TestPaimonRestoreOtherBackend(t *testing.T) {
	blobs, keys := newMemBlobs(), testKeys(100)
	m, _ := paimonHistory(t, blobs, 1, 128, keys)
	plans, err := barrier.PlanRestore(m, opID, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{barrier.BackendMemory, barrier.BackendPebble} {
		_, err := barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{Metadata: m, Plan: plans[0], Backend: b,
			Blobs: blobs, FileIO: table.NewLocalFileIO(), Dir: t.TempDir(), BackendID: "b1"})
		if err == nil || !strings.Contains(err.Error(), "state cannot move between backends") {
			t.Fatalf("paimon checkpoint restored on %s: %v", b, err)
		}
	}
	m.Operators[0].Subtasks[0].Backend = barrier.BackendPebble
	if _, err := restorePaimon(paimonFS, blobs, m, plans[0], t.TempDir()); err == nil || !strings.Contains(err.Error(), "state cannot move between backends") {
		t.Fatalf("pebble checkpoint restored on paimon: %v", err)
	}
}

// Through the checkpoint actors: the first checkpoint after an aligned
// restore of a paimon job references every adopted file it still holds and
// uploads none of them, the restored tables go on under their new
// maintainers, and nothing leaks.
func TestPaimonRestoreIncrementalThroughActors(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	cfg := jobConfig{backend: barrier.BackendPaimon, parallelism: 2, maxP: 128, retain: 2}
	j := startJob(t, blobs, fs, root, cfg)
	want := map[int64]int64{}
	for k := range int64(400) {
		want[k] = k * 3
		j.put(k*3, k)
	}
	j.mustComplete(barrier.KindCheckpoint)
	for k := int64(0); k < 400; k += 5 {
		want[k] = -k
		j.put(-k, k)
	}
	m := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	j.stop()

	cfg.restoreLatest = true
	r := startJob(t, blobs, fs, root, cfg)
	for i := range r.tasks {
		if !r.restored[i].Aligned || r.restored[i].History.BaseLen() == 0 {
			t.Fatalf("subtask %d: aligned %t, base of %d files", i, r.restored[i].Aligned, r.restored[i].History.BaseLen())
		}
	}
	keys := slices.Sorted(maps.Keys(want))
	check := func(j *job) {
		t.Helper()
		got := j.get(keys...)
		for i, k := range keys {
			if got[i] != want[k] {
				t.Fatalf("key %d reads %d, want %d", k, got[i], want[k])
			}
		}
	}
	check(r)
	quiet := r.mustComplete(barrier.KindCheckpoint)
	r.put(7, 1000, 1001, 1002)
	want[1000], want[1001], want[1002] = 7, 7, 7
	keys = append(keys, 1000, 1001, 1002)
	busy := r.mustComplete(barrier.KindCheckpoint)
	for _, o := range []outcome{quiet, busy} {
		mo := r.metadata(o)
		for i := range r.tasks {
			adopted := fileSet(m, i)
			reused := 0
			for p, f := range fileSet(mo, i) {
				a, ok := adopted[p]
				switch {
				case ok && f.Uploaded:
					t.Fatalf("checkpoint %d, subtask %d: adopted file %s uploaded again", o.id, i, p)
				case ok && f.Blob != a.Blob:
					t.Fatalf("checkpoint %d, subtask %d: adopted file %s resolves to %s, the restored checkpoint had %s", o.id, i, p, f.Blob, a.Blob)
				case ok:
					reused++
				}
			}
			if reused == 0 {
				t.Fatalf("checkpoint %d, subtask %d reuses no adopted file", o.id, i)
			}
		}
	}
	check(r)
	r.checkNoLeaks()
	r.stop()
	check(startJob(t, blobs, fs, root, cfg))
}
