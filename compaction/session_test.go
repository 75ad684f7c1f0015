package compaction

import (
	"path"
	"strconv"
	"testing"

	"github.com/lakestate/lakestate/table"
)

func TestBarrierRoundMakesCommitsVisible(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	for i := int64(0); i < 6; i++ {
		res := e.round(s, puts(i*50, i*50+100, "r"+string(rune('a'+i))), nil)
		if !res.Committed {
			t.Fatalf("round %d committed nothing", i)
		}
		if n := levelsOf(s)[0]; n != 0 {
			t.Fatalf("round %d left %d level-0 files", i, n)
		}
		e.checkModel(nil)
	}
	st := s.Stats()
	// The first round seeds the view with the first data commit in it.
	if st.FullWalks != 1 || st.DeltasFolded != 5 {
		t.Fatalf("the session walked the table %d times and folded %d deltas; want 1 walk and 5 deltas", st.FullWalks, st.DeltasFolded)
	}
}

func TestBarrierRoundWithoutNewFilesCommitsNothing(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	first := e.round(s, puts(0, 10, "a"), nil)
	res, err := s.Barrier(first.SnapshotID, e.now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.SnapshotID != first.SnapshotID {
		t.Fatalf("an empty round: %+v, want no commit and snapshot %d", res, first.SnapshotID)
	}
}

func TestSupersededRowsMaskedByDeletionVectors(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	e.round(s, puts(0, 100, "old"), nil)
	e.round(s, puts(40, 60, "new"), nil)
	vis, all := e.visible()
	for k := int64(40); k < 60; k++ {
		if len(all[k]) != 2 {
			t.Fatalf("key %d: %d stored rows, want the old and the new one (an upgrade, not a rewrite)", k, len(all[k]))
		}
		if vis[k].v != "new-"+itoa(k) {
			t.Fatalf("key %d reads %q", k, vis[k].v)
		}
	}
	dvs := 0
	for _, tr := range s.trees {
		for _, bm := range tr.dvs {
			dvs += int(bm.GetCardinality())
		}
	}
	if dvs != 20 {
		t.Fatalf("%d rows deleted by vectors, want the 20 superseded ones", dvs)
	}
	e.checkModel(nil)
}

func TestLevel0FileWithDeletesIsRewritten(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	e.round(s, puts(0, 100, "a"), nil)
	snap := e.commit(puts(200, 210, "b"), []int64{5, 6, 7, 300})
	live, _, err := e.tbl.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	var l0 string
	for _, f := range live {
		if f.File.Level == 0 {
			l0 = f.File.FileName
		}
	}
	if _, err := s.Barrier(snap, e.now); err != nil {
		t.Fatal(err)
	}
	for _, tr := range s.trees {
		for _, f := range tr.levels.AllFiles() {
			if f.FileName == l0 {
				t.Fatalf("level-0 file %s with deletes was moved to level %d instead of rewritten", l0, f.Level)
			}
			if f.DeleteRowCount != nil && *f.DeleteRowCount > 0 {
				t.Fatalf("file %s at level %d holds %d retractions", f.FileName, f.Level, *f.DeleteRowCount)
			}
		}
	}
	e.checkModel(nil)
}

func TestRoundsFoldDeltasAndOwnCommitsInPlace(t *testing.T) {
	e := newEnv(t, 2, map[string]string{table.OptionTargetFileSize: "8kb"})
	s := e.session(Config{StepBytes: 16 << 10})
	for i := int64(0); i < 12; i++ {
		e.round(s, puts(i*37%400, i*37%400+120, "v"+itoa(i)), []int64{1000 + i*11})
		e.shapeAll(s)
	}
	st := s.Stats()
	if st.FullWalks != 1 {
		t.Fatalf("%d full walks across 12 barriers with shaping; the view must survive its own commits", st.FullWalks)
	}
	if st.Steps == 0 {
		t.Fatal("no shaping happened; the test does not exercise own commits")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	e.checkModel(nil)
}

func TestShapingReducesSortedRunsAndKeepsInvariant(t *testing.T) {
	e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "8kb"})
	s := e.session(Config{StepBytes: 8 << 10})
	// Pairs of overlapping commits in disjoint key ranges: the full
	// compaction that five runs call for has several sections, so it takes
	// several steps.
	for i, lo := range []int64{0, 150, 2000, 2150, 5000} {
		e.round(s, puts(lo, lo+300, "v"+itoa(int64(i))), nil)
	}
	before := s.Backpressure().SortedRuns
	if before < 5 {
		t.Fatalf("only %d sorted runs before shaping; the test needs a full tree", before)
	}
	steps := e.shapeAll(s)
	after := s.Backpressure().SortedRuns
	t.Logf("runs %d -> %d in %d steps", before, after, steps)
	if steps < 2 || after >= before {
		t.Fatalf("shaping ran %d steps and left %d runs (was %d)", steps, after, before)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	e.checkModel(nil)
}

func TestShapingBudgetCapsBytesPerInterval(t *testing.T) {
	type interval struct {
		bytes int64
		steps int
	}
	run := func(budget int64) (out []interval, total int64) {
		e := newEnv(t, 1, map[string]string{table.OptionTargetFileSize: "64kb"})
		s := e.session(Config{ShapingBudget: budget, StepBytes: 8 << 10})
		for i := int64(0); i < 40; i++ {
			// Mostly new keys, so compactions have many key-disjoint
			// sections and split into several steps.
			e.round(s, puts(i*200, i*200+200, "v"+itoa(i)), nil)
			steps := s.Stats().Steps
			e.shapeAll(s)
			out = append(out, interval{s.Stats().IntervalShapingBytes, s.Stats().Steps - steps})
		}
		e.checkModel(nil)
		return out, s.Stats().ShapingBytes
	}
	const budget = 6 << 10
	free, freeTotal := run(0)
	capped, cappedTotal := run(budget)
	t.Logf("without budget %v (total %d)", free, freeTotal)
	t.Logf("with budget %d: %v (total %d)", budget, capped, cappedTotal)
	exceeded := false
	for _, iv := range free {
		exceeded = exceeded || (iv.bytes > budget && iv.steps > 1)
	}
	if !exceeded {
		t.Fatalf("unbudgeted shaping never wrote more than %d bytes in several steps of an interval; the test proves nothing", budget)
	}
	var sum, largest int64
	for i, iv := range capped {
		// A step larger than the whole budget may run, alone.
		if iv.bytes > budget && iv.steps > 1 {
			t.Fatalf("interval %d: shaping wrote %d bytes in %d steps, budget %d", i, iv.bytes, iv.steps, budget)
		}
		sum += iv.bytes
		if iv.steps == 1 {
			largest = max(largest, iv.bytes)
		}
		// Oversized steps are repaid: over the intervals so far, shaping
		// wrote at most the budget for each plus one step.
		if limit := int64(i+1)*budget + largest; sum > limit {
			t.Fatalf("after %d intervals shaping wrote %d bytes, more than %d", i+1, sum, limit)
		}
	}
}

func TestTTLDropsExpiredRowsOnRewrite(t *testing.T) {
	e := newEnv(t, 1, nil)
	ttl := &TTL{Field: "ts", Millis: 10_000}
	s := e.session(Config{TTL: ttl})
	at := func(ts int64) *int64 { return &ts }
	old, fresh := map[int64]row{}, map[int64]row{}
	for k := int64(0); k < 50; k++ {
		old[k] = row{v: "old", ts: at(e.now - 60_000)} // long expired
		fresh[k+50] = row{v: "fresh", ts: at(e.now)}
	}
	e.round(s, old, nil)
	e.round(s, fresh, nil)
	// A level-0 file with a delete is rewritten, and the rewrite merges
	// nothing else: rows it carries that expired go, live ones stay.
	mixed := map[int64]row{200: {v: "gone", ts: at(e.now - 60_000)}, 201: {v: "kept", ts: at(e.now)}, 202: {v: "no ts"}}
	e.round(s, mixed, []int64{1})
	_, all := e.visible()
	if len(all[200]) != 0 {
		t.Fatalf("expired row 200 survived the rewrite: %+v", all[200])
	}
	for _, k := range []int64{201, 202} {
		if len(all[k]) != 1 {
			t.Fatalf("live row %d: %d stored rows", k, len(all[k]))
		}
	}
	e.checkModel(func(r row) bool { return r.ts != nil && *r.ts+ttl.Millis <= e.now })
}

func TestTTLDropsWhollyExpiredFiles(t *testing.T) {
	e := newEnv(t, 1, nil)
	ttl := &TTL{Field: "ts", Millis: 10_000}
	s := e.session(Config{TTL: ttl})
	at := func(ts int64) *int64 { return &ts }
	stale, live := map[int64]row{}, map[int64]row{}
	for k := int64(0); k < 50; k++ {
		stale[k] = row{v: "stale", ts: at(e.now)}
		live[k+100] = row{v: "live", ts: at(e.now + 50_000)}
	}
	e.round(s, stale, nil)
	e.round(s, live, nil)
	if j := s.NextJob(e.now); j != nil && j.Kind == JobDropExpired {
		t.Fatal("a file was dropped before its rows expired")
	} else if j != nil {
		if err := s.Finish(j.Run()); err != nil {
			t.Fatal(err)
		}
	}
	e.now += 10_000
	j := s.NextJob(e.now)
	if j == nil || j.Kind != JobDropExpired {
		t.Fatalf("no file drop once every row of a file expired: %+v", j)
	}
	if err := s.Finish(j.Run()); err != nil {
		t.Fatal(err)
	}
	vis, all := e.visible()
	for k := int64(0); k < 50; k++ {
		if len(all[k]) != 0 {
			t.Fatalf("expired key %d still stored", k)
		}
	}
	for k := int64(100); k < 150; k++ {
		if vis[k].v != "live" {
			t.Fatalf("live key %d reads %+v", k, vis[k])
		}
	}
	if s.Stats().FilesExpired != 1 {
		t.Fatalf("%d files dropped, want 1", s.Stats().FilesExpired)
	}
}

func TestExpirationKeepsPinnedSnapshots(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{RetainSnapshots: 1})
	first := e.round(s, puts(0, 100, "a"), nil)
	s.Pin(1, first.SnapshotID)
	pinnedFiles := liveDataPaths(t, e, first.SnapshotID)
	// Enough rounds for shaping to rewrite the pinned snapshot's file, so
	// only the pinned snapshot still references it.
	for i := int64(1); i <= 5; i++ {
		e.round(s, puts(0, 100, "b"+itoa(i)), nil)
		e.shapeAll(s)
	}
	if s.Stats().Expirations == 0 || s.Stats().Steps == 0 {
		t.Fatalf("stats %+v: the test needs expirations and a rewrite", s.Stats())
	}
	for _, p := range pinnedFiles {
		if _, err := e.tbl.FileIO().Stat(p); err != nil {
			t.Fatalf("pinned file %s was deleted: %v", p, err)
		}
	}
	if _, err := e.tbl.Snapshot(first.SnapshotID); err != nil {
		t.Fatalf("pinned snapshot %d: %v", first.SnapshotID, err)
	}
	s.Unpin(1, false)
	e.round(s, puts(0, 10, "c"), nil)
	runExpire(t, e, s)
	for _, p := range pinnedFiles {
		if _, err := e.tbl.FileIO().Stat(p); err == nil {
			t.Fatalf("file %s of the unpinned, expired snapshot is still there", p)
		}
	}
	e.checkModel(nil)
}

func runExpire(t *testing.T, e *env, s *Session) {
	t.Helper()
	j := s.NextJob(e.now)
	if j == nil || j.Kind != JobExpire {
		t.Fatalf("expiration is not due after a round: %+v", j)
	}
	if err := s.Finish(j.Run()); err != nil {
		t.Fatal(err)
	}
}

func liveDataPaths(t *testing.T, e *env, snap int64) []string {
	t.Helper()
	live, _, err := e.tbl.LiveFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range live {
		dir, _ := e.tbl.BucketDir(f.Partition, f.Bucket)
		out = append(out, path.Join(dir, f.File.FileName))
	}
	return out
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// A commit that is not the store's level-0 append (here: another user moving
// a file, as a restore's adoption or a stray compactor would) cannot be
// folded from its delta; the next round walks the table instead of failing.
func TestForeignCompactionIsTakenInByAWalk(t *testing.T) {
	e := newEnv(t, 1, nil)
	s := e.session(Config{})
	res := e.round(s, puts(0, 100, "a"), nil)
	live, _, err := e.writer.LiveFiles(res.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	moved := live[0]
	moved.File.Level--
	if _, err := e.writer.CommitCompact(table.CompactChange{Deleted: live[:1], Added: []table.ManifestEntry{moved}},
		table.CommitInfo{User: "other", Identifier: 1, TimeMillis: e.now}); err != nil {
		t.Fatal(err)
	}
	e.round(s, puts(50, 150, "b"), nil)
	if st := s.Stats(); st.FoldFallbacks != 1 || st.FullWalks != 2 {
		t.Fatalf("stats %+v: want one fallback walk", st)
	}
	e.checkModel(nil)
}
