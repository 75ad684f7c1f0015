package subtask_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// failingFS fails every file creation while fail is set: a commit that
// writes a data file fails.
type failingFS struct {
	table.FileIO
	fail atomic.Bool
}

func (f *failingFS) Create(path string) (table.WritableFile, error) {
	if f.fail.Load() {
		return nil, fmt.Errorf("create %s: injected failure", path)
	}
	return f.FileIO.Create(path)
}

const frozenTTL = 150 // ms, for every state of the model test

// frozenStore is a paimon store with one state of each kind, all with a TTL.
type frozenStore struct {
	b   *subtask.PaimonBackend
	s   *subtask.Store
	val *subtask.ValueState
	mp  *subtask.MapState
	ls  *subtask.ListState
	tm  *subtask.TimeState
	// rounds counts compactions: the identifier of the next.
	rounds int64
}

// openFrozenStore opens the store at root. Deletion-vector tables get one
// bucket, the one compactAll compacts.
func openFrozenStore(t *testing.T, root string, fs table.FileIO, dv bool, now int64) *frozenStore {
	t.Helper()
	o := subtask.PaimonOptions{FileIO: fs, Buckets: 2, NoDeletionVectors: true}
	if dv {
		o.Buckets, o.NoDeletionVectors = 1, false
	}
	b, err := subtask.OpenPaimon(root, o)
	if err != nil {
		t.Fatal(err)
	}
	fx := &frozenStore{b: b, s: subtask.NewStore(b)}
	fx.s.SetNow(now)
	n := []subtask.Column{{Name: "n", Type: table.BigInt()}}
	fx.val = must[*subtask.ValueState](t)(fx.s.Value(subtask.Layout{Name: "val", Key: bigintKey, Value: n, TTL: frozenTTL}))
	fx.mp = must[*subtask.MapState](t)(fx.s.Map(subtask.Layout{Name: "map", Key: bigintKey,
		Sub: []subtask.Column{{Name: "s", Type: table.String().NotNull()}}, Value: n, TTL: frozenTTL}))
	fx.ls = must[*subtask.ListState](t)(fx.s.List(subtask.Layout{Name: "list", Key: bigintKey, Value: n, TTL: frozenTTL}))
	fx.tm = must[*subtask.TimeState](t)(fx.s.Time(subtask.Layout{Name: "time", Key: bigintKey, Value: n, TTL: frozenTTL}))
	return fx
}

// stamped is a model value and its write time.
type stamped struct{ v, ts int64 }

type timeAt struct{ time, seq int64 }

// frozenModel is what every read of the store must return.
type frozenModel struct {
	now int64
	val map[int64]stamped
	mp  map[int64]map[string]stamped
	ls  map[int64][]stamped
	tm  map[int64]map[timeAt]stamped
}

func (m *frozenModel) live(s stamped) bool { return s.ts+frozenTTL > m.now }

const frozenKeys = 24

// checkAll reads every key of every state and compares it with the model.
func (fx *frozenStore) checkAll(t *testing.T, m *frozenModel) {
	t.Helper()
	var all []int64
	for k := range int64(frozenKeys) {
		all = append(all, k)
	}
	fx.checkValues(t, m, all)
	fx.checkMaps(t, m, all)
	fx.checkLists(t, m, all)
	for _, k := range all {
		fx.checkRange(t, m, k, math.MinInt64, math.MaxInt64)
	}
	fx.checkScan(t, m, math.MinInt64, math.MaxInt64)
	fx.s.EndBatch()
}

func (fx *frozenStore) checkValues(t *testing.T, m *frozenModel, ks []int64) []subtask.Row {
	t.Helper()
	rows := must[[]subtask.Row](t)(fx.val.GetBatch(keys(ks...), nil))
	for i, k := range ks {
		w, ok := m.val[k]
		ok = ok && m.live(w)
		if ok != (rows[i] != nil) || ok && rows[i][0].Int() != w.v {
			t.Fatalf("now %d: value of %d: %v, want %v (present %v)", m.now, k, rows[i], w, ok)
		}
	}
	return rows
}

func (fx *frozenStore) checkMaps(t *testing.T, m *frozenModel, ks []int64) []*subtask.MapEntries {
	t.Helper()
	mes := must[[]*subtask.MapEntries](t)(fx.mp.GetBatch(keys(ks...), nil))
	for i, k := range ks {
		var got, want []string
		for sub, v := range mes[i].All() {
			got = append(got, fmt.Sprintf("%s=%d", sub[0].Str(), v[0].Int()))
		}
		for _, sub := range slices.Sorted(maps.Keys(m.mp[k])) {
			if e := m.mp[k][sub]; m.live(e) {
				want = append(want, fmt.Sprintf("%s=%d", sub, e.v))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("now %d: map of %d: %v, want %v", m.now, k, got, want)
		}
	}
	return mes
}

func (fx *frozenStore) checkLists(t *testing.T, m *frozenModel, ks []int64) {
	t.Helper()
	lists := must[[][]subtask.Row](t)(fx.ls.GetBatch(keys(ks...), nil))
	for i, k := range ks {
		var got, want []int64
		for _, e := range lists[i] {
			got = append(got, e[0].Int())
		}
		for _, e := range m.ls[k] {
			if m.live(e) {
				want = append(want, e.v)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("now %d: list of %d: %v, want %v", m.now, k, got, want)
		}
	}
}

func (m *frozenModel) timeRows(k, lo, hi int64) []string {
	var out []string
	ats := slices.SortedFunc(maps.Keys(m.tm[k]), func(a, b timeAt) int {
		if a.time != b.time {
			return int(a.time - b.time)
		}
		return int(a.seq - b.seq)
	})
	for _, at := range ats {
		if e := m.tm[k][at]; m.live(e) && at.time >= lo && at.time <= hi {
			out = append(out, fmt.Sprintf("%d:%d/%d=%d", k, at.time, at.seq, e.v))
		}
	}
	return out
}

func (fx *frozenStore) checkRange(t *testing.T, m *frozenModel, k, lo, hi int64) {
	t.Helper()
	var got []string
	if err := fx.tm.Range(key(k), lo, hi, func(r subtask.TimeRow) bool {
		got = append(got, fmt.Sprintf("%d:%d/%d=%d", k, r.Time, r.Seq, r.Value[0].Int()))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := m.timeRows(k, lo, hi); !slices.Equal(got, want) {
		t.Fatalf("now %d: range [%d, %d] of %d: %v, want %v", m.now, lo, hi, k, got, want)
	}
}

func (fx *frozenStore) checkScan(t *testing.T, m *frozenModel, lo, hi int64) {
	t.Helper()
	got := map[int64][]string{}
	if err := fx.tm.Scan(lo, hi, func(k subtask.Key, r subtask.TimeRow) bool {
		got[k.Cols[0].Int()] = append(got[k.Cols[0].Int()], fmt.Sprintf("%d:%d/%d=%d", k.Cols[0].Int(), r.Time, r.Seq, r.Value[0].Int()))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for k := range int64(frozenKeys) {
		if want := m.timeRows(k, lo, hi); !slices.Equal(got[k], want) {
			t.Fatalf("now %d: scan [%d, %d] of %d: %v, want %v", m.now, lo, hi, k, got[k], want)
		}
	}
}

type commitResult struct {
	cp  subtask.Checkpoint
	err error
}

// A model test of the frozen window: writes and reads of every kind of state
// interleave with freezes, commits on another goroutine (some failing, some
// released as failed after success) and releases; every read agrees with a
// model map, and a store reopened from the tables at the end holds the model.
// With deletion vectors, a maintenance round before each release makes the
// commit readable and its snapshot is pinned; another compaction may run
// while the commit does.
func TestFrozenFlushModel(t *testing.T) {
	for _, dv := range []bool{false, true} {
		for seed := range uint64(2) {
			t.Run(fmt.Sprintf("dv=%v/%d", dv, seed), func(t *testing.T) { runFrozenModel(t, seed, dv) })
		}
	}
}

// compactTables runs compactAll on every table of a store and returns the
// snapshots the reads should pin.
func (fx *frozenStore) compactTables(t *testing.T) map[string]int64 {
	t.Helper()
	fx.rounds++
	pins := map[string]int64{}
	for _, name := range []string{"val", "map", "list", "time"} {
		tbl, _ := fx.b.Table(name)
		if _, ok, err := tbl.LatestSnapshotID(); err != nil || !ok {
			continue
		}
		compactAll(t, tbl, fx.rounds)
		id, _, err := tbl.LatestSnapshotID()
		if err != nil {
			t.Fatal(err)
		}
		pins[name] = id
	}
	return pins
}

func runFrozenModel(t *testing.T, seed uint64, dv bool) {
	r := rand.New(rand.NewPCG(seed, 99))
	root := filepath.Join(t.TempDir(), "state")
	fs := &failingFS{FileIO: table.NewLocalFileIO()}
	fx := openFrozenStore(t, root, fs, dv, 0)
	m := &frozenModel{val: map[int64]stamped{}, mp: map[int64]map[string]stamped{}, ls: map[int64][]stamped{}, tm: map[int64]map[timeAt]stamped{}}
	var (
		held              *subtask.FrozenFlush
		pending           chan commitResult
		id                int64
		commits, failures int
	)
	// settle waits for the running commit and releases its flush.
	settle := func(ok bool) {
		t.Helper()
		if held == nil {
			return
		}
		res := <-pending
		fs.fail.Store(false)
		ok = ok && res.err == nil
		if res.err == nil {
			commits++
		} else {
			failures++
		}
		var pins map[string]int64
		switch {
		case dv && ok:
			pins = fx.compactTables(t)
		case r.IntN(2) == 0:
			pins = map[string]int64{}
			for _, tc := range res.cp.Tables {
				pins[tc.Name] = tc.Snapshot
			}
		}
		if err := fx.s.Release(held, ok, pins); err != nil {
			t.Fatal(err)
		}
		held = nil
	}
	pick := func() []int64 {
		var ks []int64
		for range 1 + r.IntN(6) {
			if k := r.Int64N(frozenKeys); !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	for range 400 {
		m.now += r.Int64N(4)
		fx.s.SetNow(m.now)
		switch op := r.IntN(20); {
		case op < 3: // read and write values
			ks := pick()
			fx.checkValues(t, m, ks)
			for _, k := range ks {
				if r.IntN(4) == 0 {
					fx.val.Delete(key(k))
					delete(m.val, k)
				} else {
					v := r.Int64N(1000)
					fx.val.Put(key(k), row(v))
					m.val[k] = stamped{v, m.now}
				}
			}
		case op < 4: // write values unread
			k, v := r.Int64N(frozenKeys), r.Int64N(1000)
			fx.val.Put(key(k), row(v))
			m.val[k] = stamped{v, m.now}
		case op < 7: // read and write map entries
			ks := pick()
			mes := fx.checkMaps(t, m, ks)
			for i, k := range ks {
				if m.mp[k] == nil {
					m.mp[k] = map[string]stamped{}
				}
				for range r.IntN(3) {
					sub := string(rune('a' + r.IntN(5)))
					if r.IntN(3) == 0 {
						mes[i].Delete(subtask.Row{subtask.Str(sub)})
						delete(m.mp[k], sub)
					} else {
						v := r.Int64N(1000)
						mes[i].Put(subtask.Row{subtask.Str(sub)}, row(v))
						m.mp[k][sub] = stamped{v, m.now}
					}
				}
			}
		case op < 10: // read and replace lists, or replace them unread
			ks := pick()
			if r.IntN(2) == 0 {
				fx.checkLists(t, m, ks)
			}
			for _, k := range ks {
				var elems []subtask.Row
				var model []stamped
				for range r.IntN(5) {
					v := r.Int64N(1000)
					elems, model = append(elems, row(v)), append(model, stamped{v, m.now})
				}
				fx.ls.Put(key(k), elems)
				m.ls[k] = model
			}
		case op < 13: // range reads and writes of time rows
			k := r.Int64N(frozenKeys)
			lo := r.Int64N(10)
			fx.checkRange(t, m, k, lo, lo+r.Int64N(5))
			if m.tm[k] == nil {
				m.tm[k] = map[timeAt]stamped{}
			}
			for range r.IntN(4) {
				at := timeAt{r.Int64N(10), r.Int64N(3)}
				if r.IntN(3) == 0 {
					fx.tm.Delete(key(k), at.time, at.seq)
					delete(m.tm[k], at)
				} else {
					v := r.Int64N(1000)
					fx.tm.Put(key(k), at.time, at.seq, row(v))
					m.tm[k][at] = stamped{v, m.now}
				}
			}
		case op < 14:
			lo := r.Int64N(10)
			fx.checkScan(t, m, lo, lo+r.Int64N(5))
		case op < 15:
			fx.checkAll(t, m)
		case op < 16 && dv && held != nil && !fs.fail.Load():
			// Maintenance between barriers, concurrent with the commit.
			fx.compactTables(t)
		default:
			if r.IntN(3) != 0 {
				break
			}
			// The barrier: release the previous flush (as failed, now and
			// then, though it committed), freeze, commit on another
			// goroutine while the loop goes on.
			settle(r.IntN(5) != 0)
			id++
			f, err := fx.s.Freeze(id)
			if err != nil {
				t.Fatal(err)
			}
			if f.ID() != id || fx.s.Buffered() != 0 {
				t.Fatalf("freeze %d: flush %d, %d keys still buffered", id, f.ID(), fx.s.Buffered())
			}
			fs.fail.Store(r.IntN(4) == 0)
			held, pending = f, make(chan commitResult, 1)
			go func() {
				cp, err := f.Commit()
				pending <- commitResult{cp, err}
			}()
		}
		fx.s.EndBatch()
	}
	settle(true)
	fx.checkAll(t, m)
	// The last freeze commits whatever a failure left.
	id++
	f := must[*subtask.FrozenFlush](t)(fx.s.Freeze(id))
	must[subtask.Checkpoint](t)(f.Commit())
	var pins map[string]int64
	if dv {
		pins = fx.compactTables(t)
	}
	if err := fx.s.Release(f, true, pins); err != nil {
		t.Fatal(err)
	}
	fx.checkAll(t, m)
	if commits == 0 || failures == 0 {
		t.Fatalf("%d commits and %d failures: the run tests neither path", commits, failures)
	}
	if err := fx.b.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openFrozenStore(t, root, nil, dv, m.now)
	defer reopened.b.Close()
	reopened.checkAll(t, m)
}

// The calls out of order are refused, and change nothing.
func TestFrozenFlushErrors(t *testing.T) {
	if _, err := subtask.NewStore(subtask.NewMemory()).Freeze(1); err == nil {
		t.Fatal("a memory store froze")
	}
	fs := &failingFS{FileIO: table.NewLocalFileIO()}
	fx := openFrozenStore(t, t.TempDir(), fs, false, 0)
	defer fx.b.Close()
	fx.val.Put(key(1), row(10))
	f := must[*subtask.FrozenFlush](t)(fx.s.Freeze(5))
	if _, err := fx.s.Freeze(6); err == nil {
		t.Fatal("froze while a flush is held")
	}
	if _, err := fx.s.Flush(6); err == nil {
		t.Fatal("flushed while a flush is held")
	}
	if err := fx.s.Release(f, true, nil); err == nil {
		t.Fatal("released an uncommitted flush as committed")
	}
	// That Release failed the flush; it stays readable.
	m := &frozenModel{val: map[int64]stamped{1: {10, 0}}}
	fx.checkValues(t, m, []int64{1, 2})
	fx.s.EndBatch()
	if _, err := f.Commit(); err == nil {
		t.Fatal("committed a flush released as failed")
	}
	if _, err := fx.s.Freeze(4); err == nil {
		t.Fatal("froze an older checkpoint")
	}
	g := must[*subtask.FrozenFlush](t)(fx.s.Freeze(6))
	if err := fx.s.Release(f, true, nil); err == nil {
		t.Fatal("released a flush the store no longer holds")
	}
	cp := must[subtask.Checkpoint](t)(g.Commit())
	if _, err := g.Commit(); err == nil {
		t.Fatal("committed twice")
	}
	if cp.ID != 6 || cp.Tables[0].Name != "val" || !cp.Tables[0].Committed || cp.Tables[0].Upserts != 1 || cp.Tables[1].Committed {
		t.Fatalf("checkpoint %+v", cp)
	}
	if err := fx.s.Release(g, true, map[string]int64{"val": cp.Tables[0].Snapshot - 1}); err == nil {
		t.Fatal("released with a pin before the commit")
	}
	// That Release failed the flush; the next freeze folds it in.
	g = must[*subtask.FrozenFlush](t)(fx.s.Freeze(7))
	cp = must[subtask.Checkpoint](t)(g.Commit())
	if err := fx.s.Release(g, true, map[string]int64{"val": cp.Tables[0].Snapshot}); err != nil {
		t.Fatal(err)
	}
	fx.checkValues(t, m, []int64{1, 2})
	fx.s.EndBatch()
	if _, err := fx.s.Flush(8); err != nil {
		t.Fatal(err)
	}
}

// A failed commit keeps its rows readable, and the next freeze writes them
// under the newer rows: both reach the table.
func TestFrozenFlushFoldsFailure(t *testing.T) {
	fs := &failingFS{FileIO: table.NewLocalFileIO()}
	root := t.TempDir()
	fx := openFrozenStore(t, root, fs, false, 0)
	fx.val.PutBatch(keys(1, 2, 3), []subtask.Row{row(1), row(2), row(3)})
	f := must[*subtask.FrozenFlush](t)(fx.s.Freeze(1))
	fs.fail.Store(true)
	if _, err := f.Commit(); err == nil {
		t.Fatal("commit through a failing file system succeeded")
	}
	fs.fail.Store(false)
	if err := fx.s.Release(f, false, nil); err != nil {
		t.Fatal(err)
	}
	m := &frozenModel{val: map[int64]stamped{1: {1, 0}, 2: {2, 0}, 3: {3, 0}}}
	fx.checkValues(t, m, []int64{1, 2, 3, 4})
	fx.s.EndBatch()
	fx.val.Put(key(2), row(20))
	fx.val.Delete(key(3))
	fx.val.Put(key(4), row(4))
	m.val[2], m.val[4] = stamped{20, 0}, stamped{4, 0}
	delete(m.val, 3)
	g := must[*subtask.FrozenFlush](t)(fx.s.Freeze(2))
	fx.checkValues(t, m, []int64{1, 2, 3, 4})
	fx.s.EndBatch()
	cp := must[subtask.Checkpoint](t)(g.Commit())
	if tc := cp.Tables[0]; tc.Upserts != 3 || tc.Tombstones != 1 {
		t.Fatalf("folded commit %+v, want 3 upserts and 1 tombstone", tc)
	}
	if err := fx.s.Release(g, true, nil); err != nil {
		t.Fatal(err)
	}
	fx.checkValues(t, m, []int64{1, 2, 3, 4})
	fx.s.EndBatch()
	if err := fx.b.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openFrozenStore(t, root, nil, false, 0)
	defer reopened.b.Close()
	reopened.checkValues(t, m, []int64{1, 2, 3, 4})
}
