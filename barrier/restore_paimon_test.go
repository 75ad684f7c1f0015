package barrier_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// shapeLayouts are the states a job with jobConfig.allShapes registers
// besides valueLayout: one of each other store shape.
var shapeLayouts = []subtask.Layout{{
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

// shapeStates are a task's states of the other shapes.
type shapeStates struct {
	lists *subtask.ListState
	maps  *subtask.MapState
	times *subtask.TimeState
}

func registerShapes(t testing.TB, tk *task) *shapeStates {
	t.Helper()
	var s shapeStates
	var err error
	if s.lists, err = tk.store.List(shapeLayouts[0]); err != nil {
		t.Fatal(err)
	}
	if s.maps, err = tk.store.Map(shapeLayouts[1]); err != nil {
		t.Fatal(err)
	}
	if s.times, err = tk.store.Time(shapeLayouts[2]); err != nil {
		t.Fatal(err)
	}
	return &s
}

// shapeModel is what the four states of a job with all shapes hold.
type shapeModel struct {
	values map[int64]int64
	lists  map[int64][]int64
	maps   map[int64]map[int64]int64
	times  map[int64]map[[2]int64]int64 // (time, seq) → value
}

func newShapeModel() *shapeModel {
	return &shapeModel{values: map[int64]int64{}, lists: map[int64][]int64{}, maps: map[int64]map[int64]int64{}, times: map[int64]map[[2]int64]int64{}}
}

// owns tells whether task tk owns key k.
func (j *job) owns(tk *task, k int64) bool {
	return tk.kg.Contains(keygroup.ForKeyHash(int32(k), j.cfg.maxP))
}

// applyShapes writes a round of changes to every state of the keys' owners
// and to the model: round 0 creates every state of every key, later rounds
// update a third of the keys and delete every seventh.
func (j *job) applyShapes(m *shapeModel, keys []int64, round int64) {
	j.t.Helper()
	for _, tk := range j.tasks {
		var mine []int64
		for _, k := range keys {
			if j.owns(tk, k) && (round == 0 || k%3 == round%3 || k%7 == 0) {
				mine = append(mine, k)
			}
		}
		for at := 0; at < len(mine); at += 500 {
			batch := mine[at:min(at+500, len(mine))]
			ks := make([]subtask.Key, len(batch))
			for i, k := range batch {
				ks[i] = keyOf(k, j.cfg.maxP)
			}
			entries, err := tk.shapes.maps.GetBatch(ks, nil)
			if err != nil {
				j.t.Fatal(err)
			}
			for i, k := range batch {
				key := ks[i]
				if round > 0 && k%7 == 0 {
					tk.values.Delete(key)
					tk.shapes.lists.Delete(key)
					entries[i].Clear()
					tk.shapes.times.Delete(key, k, 0)
					delete(m.values, k)
					delete(m.lists, k)
					delete(m.maps, k)
					delete(m.times[k], [2]int64{k, 0})
					continue
				}
				v := k*10 + round
				tk.values.Put(key, subtask.Row{subtask.Int(v)})
				tk.shapes.lists.Put(key, []subtask.Row{{subtask.Int(v)}, {subtask.Int(-v)}})
				entries[i].Put(subtask.Row{subtask.Int(round)}, subtask.Row{subtask.Int(v)})
				tk.shapes.times.Put(key, k+round, round, subtask.Row{subtask.Int(v)})
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
			tk.store.EndBatch()
		}
	}
}

// checkShapes reads every key at every task: each task holds exactly the
// model's rows of its own key groups in each state, nothing else.
func (j *job) checkShapes(m *shapeModel, keys []int64) {
	j.t.Helper()
	for _, tk := range j.tasks {
		j.checkTaskShapes(tk, m, keys)
	}
}

func (j *job) checkTaskShapes(tk *task, m *shapeModel, keys []int64) {
	t := j.t
	t.Helper()
	for at := 0; at < len(keys); at += 500 {
		batch := keys[at:min(at+500, len(keys))]
		ks := make([]subtask.Key, len(batch))
		for i, k := range batch {
			ks[i] = keyOf(k, j.cfg.maxP)
		}
		values, err := tk.values.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		lists, err := tk.shapes.lists.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := tk.shapes.maps.GetBatch(ks, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range batch {
			wantV, hasV := m.values[k]
			wantL, wantM := m.lists[k], m.maps[k]
			if !j.owns(tk, k) {
				hasV, wantL, wantM = false, nil, nil
			}
			if got := values[i]; (got != nil) != hasV || hasV && got[0].Int() != wantV {
				t.Fatalf("task %d %v: value of key %d is %v, want %d (%t)", tk.idx, tk.kg, k, got, wantV, hasV)
			}
			var gotL []int64
			for _, r := range lists[i] {
				gotL = append(gotL, r[0].Int())
			}
			if !slices.Equal(gotL, wantL) {
				t.Fatalf("task %d %v: list of key %d is %v, want %v", tk.idx, tk.kg, k, gotL, wantL)
			}
			gotM := map[int64]int64{}
			for sub, v := range entries[i].All() {
				gotM[sub[0].Int()] = v[0].Int()
			}
			if !maps.Equal(gotM, wantM) {
				t.Fatalf("task %d %v: map of key %d is %v, want %v", tk.idx, tk.kg, k, gotM, wantM)
			}
		}
		tk.store.EndBatch()
	}
	got := map[int64]map[[2]int64]int64{}
	err := tk.shapes.times.Scan(math.MinInt64, math.MaxInt64, func(key subtask.Key, r subtask.TimeRow) bool {
		k := key.Cols[0].Int()
		if got[k] == nil {
			got[k] = map[[2]int64]int64{}
		}
		if _, dup := got[k][[2]int64{r.Time, r.Seq}]; dup {
			t.Fatalf("task %d: time row (%d, %d) of key %d read twice", tk.idx, r.Time, r.Seq, k)
		}
		got[k][[2]int64{r.Time, r.Seq}] = r.Value[0].Int()
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	tk.store.EndBatch()
	want := map[int64]map[[2]int64]int64{}
	for k, rows := range m.times {
		if j.owns(tk, k) && len(rows) > 0 {
			want[k] = rows
		}
	}
	if !maps.EqualFunc(got, want, func(a, b map[[2]int64]int64) bool { return maps.Equal(a, b) }) {
		t.Fatalf("task %d %v: time rows of %d keys, want %d keys", tk.idx, tk.kg, len(got), len(want))
	}
}

func testKeys(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i + 1)
	}
	return keys
}

// shapeHistory runs a paimon job of all shapes at parallelism p through two
// checkpoints of changes (so the tables carry deletion vectors and several
// levels) and stops it.
func shapeHistory(t *testing.T, blobs *memBlobs, fs *faultyFS, root string, p int, keys []int64) (*barrier.Metadata, *shapeModel) {
	t.Helper()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPaimon, parallelism: p, maxP: 128, allShapes: true})
	m := newShapeModel()
	j.applyShapes(m, keys, 0)
	j.mustComplete(barrier.KindCheckpoint)
	j.applyShapes(m, keys, 1)
	md := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	j.checkShapes(m, keys)
	j.stop()
	return md, m
}

// An aligned restore returns every row of the four store shapes, adopts the
// checkpoint's files as its reuse base, and the tables go on: writes, the
// rounds of new maintainers (one walk of the adopted files each) and a
// second restore from the next checkpoint.
func TestPaimonRestoreAligned(t *testing.T) {
	blobs, fs, root, keys := newMemBlobs(), newFaultyFS(), t.TempDir(), testKeys(800)
	m, model := shapeHistory(t, blobs, fs, root, 2, keys)
	cfg := jobConfig{backend: barrier.BackendPaimon, parallelism: 2, maxP: 128, allShapes: true, restoreLatest: true}
	j := startJob(t, blobs, fs, root, cfg)
	j.checkShapes(model, keys)
	for i, r := range j.restored {
		var files, bytes int64
		m.Operators[0].Subtasks[i].Files(func(_ barrier.FileKey, f barrier.FileRef) { files++; bytes += f.Size })
		if !r.Aligned || int64(r.History.BaseLen()) != files || r.History.Confirmed() != m.ID || r.BytesRead != bytes {
			t.Fatalf("subtask %d: aligned %t, base of %d files from %d, %d bytes read; want %d files from %d, %d bytes",
				i, r.Aligned, r.History.BaseLen(), r.History.Confirmed(), r.BytesRead, files, m.ID, bytes)
		}
	}
	j.applyShapes(model, keys, 2)
	j.mustComplete(barrier.KindCheckpoint)
	j.checkShapes(model, keys)
	j.checkNoLeaks()
	j.stop()
	j = startJob(t, blobs, fs, root, cfg)
	j.checkShapes(model, keys)
}

// A rescale returns exactly the rows of each new key-group range in every
// state: each key at its owner, nowhere else, so the union is the original
// state without duplicates. The rescaled tables checkpoint and restore like
// any other (shown once, for 2 to 3).
func TestPaimonRestoreRescale(t *testing.T) {
	for _, c := range [][2]int{{1, 2}, {2, 3}, {3, 2}} {
		t.Run(fmt.Sprintf("%dto%d", c[0], c[1]), func(t *testing.T) {
			blobs, fs, root, keys := newMemBlobs(), newFaultyFS(), t.TempDir(), testKeys(300)
			_, model := shapeHistory(t, blobs, fs, root, c[0], keys)
			cfg := jobConfig{backend: barrier.BackendPaimon, parallelism: c[1], maxP: 128, allShapes: true, restoreLatest: true}
			j := startJob(t, blobs, fs, root, cfg)
			want, _ := keygroup.Ranges(128, c[1])
			for i, tk := range j.tasks {
				if tk.kg != want[i] || j.restored[i].Aligned || j.restored[i].KeyGroups != want[i] {
					t.Fatalf("subtask %d owns %v (restored %v, aligned %t), want %v", i, tk.kg, j.restored[i].KeyGroups, j.restored[i].Aligned, want[i])
				}
				stateDir := filepath.Dir(tk.backend.(*subtask.PaimonBackend).Root())
				if names, err := fs.List(stateDir); err != nil || !slices.Equal(names, []string{"paimon"}) {
					t.Fatalf("subtask %d leaves %v (%v) in its state directory", i, names, err)
				}
			}
			j.checkShapes(model, keys)
			if c != [2]int{2, 3} {
				return
			}
			j.applyShapes(model, keys, 2)
			j.mustComplete(barrier.KindCheckpoint)
			j.checkShapes(model, keys)
			j.stop()
			j = startJob(t, blobs, fs, root, cfg)
			j.checkShapes(model, keys)
		})
	}
}

// Through the checkpoint actors: the first checkpoint after an aligned
// restore of a paimon job references every adopted file it still holds and
// uploads none of them, the restored tables go on under their new
// maintainers, and nothing leaks.
func TestPaimonRestoreIncremental(t *testing.T) {
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

func restorePaimon(fio table.FileIO, blobs *memBlobs, m *barrier.Metadata, plan barrier.SubtaskRestore, dir string) (*barrier.RestoredStore, error) {
	return barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{Metadata: m, Plan: plan, Backend: barrier.BackendPaimon,
		Blobs: blobs, FileIO: fio, Dir: dir, BackendID: "b1"})
}

// A missing blob, a corrupt file or a file the checkpoint lacks fails the
// restore with an error naming the file, and a restore never writes into a
// table directory that holds files.
func TestPaimonRestoreBadFiles(t *testing.T) {
	blobs, fs, root, keys := newMemBlobs(), newFaultyFS(), t.TempDir(), testKeys(300)
	m, model := shapeHistory(t, blobs, fs, root, 1, keys)
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
	data, manifest, index := find("v", "bucket-0/data-"), find("m", "manifest/manifest-"), find("v", "index/")
	snapshot, schema := find("l", "snapshot/"), find("t", "schema/")
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
		{"corrupt deletion vectors", func() func() { return swap(index, garbage(index)) }, path.Base(index.Path)},
		{"corrupt snapshot", func() func() { return swap(snapshot, garbage(snapshot)) }, snapshot.Path},
		{"corrupt schema", func() func() { return swap(schema, garbage(schema)) }, schema.Path},
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
			r, err := restorePaimon(fs, blobs, m, plans[0], filepath.Join(t.TempDir(), "state"))
			if err == nil {
				r.Backend.Close()
				t.Fatal("restore succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %s", err, c.want)
			}
		})
	}

	// A second restore into the directory of a running restored store is
	// refused and leaves its tables alone.
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPaimon, parallelism: 1, maxP: 128, allShapes: true, restoreLatest: true})
	j.applyShapes(model, keys, 2)
	j.mustComplete(barrier.KindCheckpoint)
	stateDir := filepath.Dir(j.tasks[0].backend.(*subtask.PaimonBackend).Root())
	if _, err := restorePaimon(fs, blobs, m, plans[0], stateDir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a directory with tables: %v", err)
	}
	j.checkShapes(model, keys)
}

// A paimon checkpoint does not restore onto another backend, nor another
// backend's onto paimon.
func TestPaimonRestoreOtherBackend(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	m, _ := shapeHistory(t, blobs, fs, root, 1, testKeys(50))
	plans, err := barrier.PlanRestore(m, opID, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{barrier.BackendMemory, barrier.BackendPebble} {
		_, err := barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{Metadata: m, Plan: plans[0], Backend: b,
			Blobs: blobs, FileIO: fs, Dir: t.TempDir(), BackendID: "b1"})
		if err == nil || !strings.Contains(err.Error(), "state cannot move between backends") {
			t.Fatalf("paimon checkpoint restored on %s: %v", b, err)
		}
	}
	m.Operators[0].Subtasks[0].Backend = barrier.BackendPebble
	if _, err := restorePaimon(fs, blobs, m, plans[0], t.TempDir()); err == nil || !strings.Contains(err.Error(), "state cannot move between backends") {
		t.Fatalf("pebble checkpoint restored on paimon: %v", err)
	}
}

// Two runs restored from one paimon checkpoint both commit snapshot-<S+1>,
// with different content: each run uploads its own copy, and a restore of
// each run's checkpoint reads that run's values.
func TestPaimonRestoreTwiceFromOneCheckpoint(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	cfg := jobConfig{backend: barrier.BackendPaimon, parallelism: 1, retain: 3}
	j := startJob(t, blobs, fs, root, cfg)
	for k := range int64(100) {
		j.put(k, k)
	}
	m1 := j.metadata(j.mustComplete(barrier.KindCheckpoint))
	j.stop()

	runs := map[int64]*barrier.Metadata{}
	for _, v := range []int64{1000, 2000} {
		cfg.restore = m1
		r := startJob(t, blobs, fs, root, cfg)
		for k := range int64(100) {
			r.put(v+k, k)
		}
		runs[v] = r.metadata(r.mustComplete(barrier.KindCheckpoint))
		r.stop()
	}
	a, b := fileSet(runs[1000], 0), fileSet(runs[2000], 0)
	same := 0
	for p, fa := range a {
		if fb, ok := b[p]; ok && fa.Uploaded && fb.Uploaded {
			same++
			if fa.Blob == fb.Blob {
				t.Fatalf("both runs uploaded %s to %s", p, fa.Blob)
			}
		}
	}
	if same == 0 {
		t.Fatal("the runs made no same-named new files")
	}
	for _, v := range []int64{1000, 2000} {
		cfg.restore = runs[v]
		r := startJob(t, blobs, fs, root, cfg)
		for _, k := range []int64{0, 42, 99} {
			if got := r.get(k); got[0] != v+k {
				t.Fatalf("restore of the %d run's checkpoint %d: key %d = %d, want %d", v, runs[v].ID, k, got[0], v+k)
			}
		}
		r.stop()
	}
}

// A paimon savepoint restores aligned and rescaled; it is no reuse base, so
// the first checkpoint after it uploads every file.
func TestPaimonRestoreSavepoint(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	cfg := jobConfig{backend: barrier.BackendPaimon, parallelism: 2, maxP: 16}
	j := startJob(t, blobs, fs, root, cfg)
	keys := keysCoveringGroups(16, 3)
	for _, k := range keys {
		j.put(k*5, k)
	}
	j.mustComplete(barrier.KindCheckpoint)
	sp := j.metadata(j.mustComplete(barrier.KindSavepoint))
	j.stop()
	for _, p := range []int{2, 3} {
		r := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendPaimon, parallelism: p, maxP: 16, restore: sp})
		ranges, _ := keygroup.Ranges(16, p)
		checkOwnership(t, r, keys, ranges, func(k int64) (int64, bool) { return k * 5, true })
		for i, sd := range r.mustComplete(barrier.KindCheckpoint).ups {
			if sd.Reused != 0 || sd.Uploads == 0 {
				t.Fatalf("parallelism %d, subtask %d: first checkpoint after a savepoint reuses %d files, uploads %d", p, i, sd.Reused, sd.Uploads)
			}
		}
		r.stop()
	}
}
