package subtask_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// A write of one layer of an overlay case: a value, a tombstone, or nothing.
const (
	none int64 = 0
	del  int64 = -1
)

// overlayCase is one key written in up to three layers: committed at time 0,
// frozen at time 60, live at time 70, read at readAt, with frozenTTL: the
// committed row expires at 150, the frozen one at 210, the live one at 220.
type overlayCase struct {
	name                    string
	committed, frozen, live int64
	readAt                  int64
	want                    int64 // none: absent
}

var overlayCases = []overlayCase{
	{name: "nothing", readAt: 80},
	{name: "committed only", committed: 5, readAt: 80, want: 5},
	{name: "frozen upsert overrides", committed: 5, frozen: 6, readAt: 80, want: 6},
	{name: "frozen tombstone hides", committed: 5, frozen: del, readAt: 80},
	{name: "frozen only", frozen: 7, readAt: 80, want: 7},
	{name: "live over frozen", committed: 5, frozen: 7, live: 8, readAt: 80, want: 8},
	{name: "live tombstone over frozen", frozen: 7, live: del, readAt: 80},
	{name: "live upsert over frozen tombstone", committed: 5, frozen: del, live: 9, readAt: 80, want: 9},
	{name: "committed expired", committed: 5, readAt: 170},
	{name: "frozen rewrite outlives the committed row", committed: 5, frozen: 5, readAt: 170, want: 5},
	{name: "frozen row expired", frozen: 6, readAt: 215},
	{name: "live row outlives the frozen one", frozen: 6, live: 8, readAt: 215, want: 8},
}

// overlayStore is a paimon store of one state per kind, all with
// frozenTTL, whose commits fail while fail is set.
func overlayStore(t *testing.T) (*frozenStore, *failingFS) {
	fs := &failingFS{FileIO: table.NewLocalFileIO()}
	fx := openFrozenStore(t, t.TempDir(), fs, false, 0)
	t.Cleanup(func() { fx.b.Close() })
	return fx, fs
}

// runOverlay writes every case's layers, freezes the middle one, and calls
// check before the commit, after a failed commit, and after a commit that
// succeeded and was released.
func runOverlay(t *testing.T, write func(fx *frozenStore, k, v int64), check func(t *testing.T, fx *frozenStore, k int64, c overlayCase)) {
	fx, fs := overlayStore(t)
	layer := func(now int64, v func(c overlayCase) int64) {
		fx.s.SetNow(now)
		for k, c := range overlayCases {
			if w := v(c); w != none {
				write(fx, int64(k), w)
			}
			fx.s.EndBatch()
		}
	}
	layer(0, func(c overlayCase) int64 { return c.committed })
	must[subtask.Checkpoint](t)(fx.s.Flush(1))
	layer(60, func(c overlayCase) int64 { return c.frozen })
	f := must[*subtask.FrozenFlush](t)(fx.s.Freeze(2))
	layer(70, func(c overlayCase) int64 { return c.live })
	checkAll := func(when string) {
		for k, c := range overlayCases {
			t.Run(when+"/"+c.name, func(t *testing.T) {
				fx.s.SetNow(c.readAt)
				check(t, fx, int64(k), c)
				fx.s.EndBatch()
			})
		}
	}
	checkAll("frozen")
	fs.fail.Store(true)
	if _, err := f.Commit(); err == nil {
		t.Fatal("commit through a failing file system succeeded")
	}
	fs.fail.Store(false)
	checkAll("commit failed")
	if err := fx.s.Release(f, false, nil); err != nil {
		t.Fatal(err)
	}
	// The live layer freezes over the failed one.
	g := must[*subtask.FrozenFlush](t)(fx.s.Freeze(3))
	checkAll("folded")
	must[subtask.Checkpoint](t)(g.Commit())
	if err := fx.s.Release(g, true, nil); err != nil {
		t.Fatal(err)
	}
	checkAll("committed")
}

// untouched is what a committed row that no later layer touches reads as.
func (c overlayCase) untouched() int64 {
	if c.committed > 0 && c.readAt < frozenTTL {
		return c.committed
	}
	return none
}

// Every read sees the live buffer over the frozen one over the table, per
// key or entry, with TTLs, before the commit, after a failed one, folded
// under the next freeze, and committed.
func TestFrozenOverlayValue(t *testing.T) {
	runOverlay(t, func(fx *frozenStore, k, v int64) {
		if v == del {
			fx.val.Delete(key(k))
		} else {
			fx.val.Put(key(k), row(v))
		}
	}, func(t *testing.T, fx *frozenStore, k int64, c overlayCase) {
		got := must[[]subtask.Row](t)(fx.val.GetBatch(keys(k), nil))[0]
		if (got == nil) != (c.want == none) || got != nil && got[0].Int() != c.want {
			t.Fatalf("%v, want %d", got, c.want)
		}
	})
}

// Map entries: entry a takes the layers; entry b, committed with a, is
// never touched again and must stay beside it.
func TestFrozenOverlayMap(t *testing.T) {
	a, b := subtask.Row{subtask.Str("a")}, subtask.Row{subtask.Str("b")}
	runOverlay(t, func(fx *frozenStore, k, v int64) {
		me := must[[]*subtask.MapEntries](t)(fx.mp.GetBatch(keys(k), nil))[0]
		switch {
		case v == del:
			me.Delete(a)
		case fx.s.Now() == 0:
			me.Put(a, row(v))
			me.Put(b, row(v*10))
		default:
			me.Put(a, row(v))
		}
	}, func(t *testing.T, fx *frozenStore, k int64, c overlayCase) {
		me := must[[]*subtask.MapEntries](t)(fx.mp.GetBatch(keys(k), nil))[0]
		var got, want []string
		for sub, v := range me.All() {
			got = append(got, fmt.Sprintf("%s=%d", sub[0].Str(), v[0].Int()))
		}
		if c.want != none {
			want = append(want, fmt.Sprintf("a=%d", c.want))
		}
		if u := c.untouched(); u != none {
			want = append(want, fmt.Sprintf("b=%d", u*10))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v, want %v", got, want)
		}
	})
}

// Lists are written without a read (their images come from the table or the
// frozen buffer at the freeze); a shorter list must not keep the tail of a
// longer one under it.
func TestFrozenOverlayList(t *testing.T) {
	runOverlay(t, func(fx *frozenStore, k, v int64) {
		switch {
		case v == del:
			fx.ls.Delete(key(k))
		case fx.s.Now() == 0:
			fx.ls.Put(key(k), []subtask.Row{row(v), row(v + 1), row(v + 2)})
		default:
			fx.ls.Put(key(k), []subtask.Row{row(v), row(v + 1)})
		}
	}, func(t *testing.T, fx *frozenStore, k int64, c overlayCase) {
		var got, want []int64
		for _, e := range must[[][]subtask.Row](t)(fx.ls.GetBatch(keys(k), nil))[0] {
			got = append(got, e[0].Int())
		}
		switch {
		case c.want == none:
		case c.want == c.committed && c.frozen == none && c.live == none:
			want = []int64{c.want, c.want + 1, c.want + 2}
		default:
			want = []int64{c.want, c.want + 1}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v, want %v", got, want)
		}
	})
}

// Time rows: the row at time 1 takes the layers; the row at time 2,
// committed with it, is never touched again. Range and Scan agree (Scan
// only before any row expires: it tombstones the expired rows of every key,
// and the cases read at times back and forth).
func TestFrozenOverlayTime(t *testing.T) {
	runOverlay(t, func(fx *frozenStore, k, v int64) {
		switch {
		case v == del:
			fx.tm.Delete(key(k), 1, 0)
		case fx.s.Now() == 0:
			fx.tm.Put(key(k), 1, 0, row(v))
			fx.tm.Put(key(k), 2, 0, row(v*10))
		default:
			fx.tm.Put(key(k), 1, 0, row(v))
		}
	}, func(t *testing.T, fx *frozenStore, k int64, c overlayCase) {
		var want []string
		if c.want != none {
			want = append(want, fmt.Sprintf("1=%d", c.want))
		}
		if u := c.untouched(); u != none {
			want = append(want, fmt.Sprintf("2=%d", u*10))
		}
		var ranged []string
		if err := fx.tm.Range(key(k), math.MinInt64, math.MaxInt64, func(r subtask.TimeRow) bool {
			ranged = append(ranged, fmt.Sprintf("%d=%d", r.Time, r.Value[0].Int()))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		scanned := ranged
		if c.readAt < frozenTTL {
			scanned = nil
			if err := fx.tm.Scan(0, 10, func(kk subtask.Key, r subtask.TimeRow) bool {
				if kk.Cols[0].Int() == k {
					scanned = append(scanned, fmt.Sprintf("%d=%d", r.Time, r.Value[0].Int()))
				}
				return true
			}); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(ranged, want) || !slices.Equal(scanned, want) {
			t.Fatalf("range %v, scan %v, want %v", ranged, scanned, want)
		}
	})
}
