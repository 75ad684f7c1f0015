package table

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func ins(key string, seq int64, val string) memRow {
	return memRow{key: key, seq: seq, kind: KindInsert, val: val}
}
func del(key string, seq int64) memRow { return memRow{key: key, seq: seq, kind: KindDelete} }

// compactRound runs what a deletion-vector table's barrier round does:
// force level 0 up, plan, execute, and fold the result into the tree.
func compactRound(t *testing.T, b *memBucket, l *Levels, dvs DeletionVectors, o CompactionOptions) (CompactResult, DeletionVectors) {
	t.Helper()
	unit, ok := o.Universal().PickLevel0(l.NumLevels(), l.SortedRuns())
	if !ok {
		return CompactResult{}, dvs
	}
	res := compactUnit(t, b, l, dvs, unit, o)
	return res, res.DVs
}

func compactUnit(t *testing.T, b *memBucket, l *Levels, dvs DeletionVectors, unit CompactUnit, o CompactionOptions) CompactResult {
	t.Helper()
	plan := PlanCompaction(bytes.Compare, unit, l, o)
	res, err := Compact(plan, l, dvs, b)
	if err != nil {
		t.Fatalf("compact %s: %v", stepsString(plan), err)
	}
	if err := l.Apply(res.Deleted, res.Added); err != nil {
		t.Fatalf("apply %s: %v", stepsString(plan), err)
	}
	if err := CheckBucket(l, res.DVs, b); err != nil {
		t.Fatalf("after %s: %v", stepsString(plan), err)
	}
	return res
}

func dvString(dvs DeletionVectors) string {
	var parts []string
	for name, bm := range dvs {
		parts = append(parts, name+bm.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// The history of the pk-dv-parquet fixture's partition f1=10 in one bucket:
// a first round to the max level, then an update upgraded with a lookup and
// a delete rewritten away into a deletion vector.
func TestCompactDeletionVectorRounds(t *testing.T) {
	o := CompactionOptions{NumLevels: 6, NumSortedRunTrigger: 5, MaxSizeAmplificationPercent: 200, SizeRatio: 1,
		SmallFileSize: 0, DeletionVectors: true}
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("d0", 0, ins("Alex", 0, "16.1"), ins("Bob", 1, "12.1"), ins("David", 2, "17.1"), ins("Emily", 3, "13.1"), ins("Tony", 4, "14.1")),
		b.file("a0", 0, ins("Two roads", 0, "11.0"), ins("Alice", 1, "11.1")),
	}, o.NumLevels)
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{}
	// Two overlapping level-0 files merged into the max level, nothing
	// below to look up.
	res, dvs := compactRound(t, b, l, dvs, o)
	if got := runsString(l.SortedRuns()); got != "out-1@5" {
		t.Fatalf("after first round: %s", got)
	}
	if res.DVChanged || len(dvs) != 0 {
		t.Fatalf("first round changed deletion vectors: %s", dvString(dvs))
	}
	// Alice updated, Tony deleted.
	if err := l.Apply(nil, []DataFileMeta{
		b.file("a1", 0, memRow{key: "Alice", seq: 2, kind: KindUpdateAfter, val: "19.1"}),
		b.file("d1", 0, del("Tony", 5)),
	}); err != nil {
		t.Fatal(err)
	}
	res, dvs = compactRound(t, b, l, dvs, o)
	// d1 holds a delete: rewritten, and the delete dropped, so no file
	// replaces it; a1 is upgraded in place. Both keys supersede their
	// level-5 rows (Alex Alice Bob David Emily Tony "Two roads").
	if got := runsString(l.SortedRuns()); got != "a1@4 out-1@5" {
		t.Fatalf("after second round: %s", got)
	}
	if got := dvString(dvs); got != "out-1{1,5}" {
		t.Fatalf("deletion vectors = %s", got)
	}
	if got, want := names(res.Deleted), []string{"a1", "d1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("deleted = %v, want %v", got, want)
	}
	want := map[string]string{"Two roads": "11.0", "Alice": "19.1", "Alex": "16.1", "Bob": "12.1", "David": "17.1", "Emily": "13.1"}
	if got := b.visibleRows(l, dvs); !reflect.DeepEqual(got, want) {
		t.Fatalf("visible rows = %v\nwant %v", got, want)
	}
}

func TestCompactRewriteDropsInputVectors(t *testing.T) {
	o := CompactionOptions{SmallFileSize: 1 << 30, DeletionVectors: true}
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("u3", 3, ins("a", 1, "a1"), ins("b", 2, "b1"), ins("c", 3, "c1")),
		b.file("u5", 5, ins("c", 0, "c0"), ins("d", 0, "d0")),
		b.file("n", 0, ins("b", 9, "b9"), ins("d", 10, "d10")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	// c at level 5 is superseded by c at level 3; a is deleted in u3.
	dvs := DeletionVectors{}
	dvs.Add("u5", 0)
	dvs.Add("u3", 0)
	if err := CheckBucket(l, dvs, b); err != nil {
		t.Fatal(err)
	}
	b.rollRows = 1
	res := compactUnit(t, b, l, dvs, CompactUnit{OutputLevel: 4, Files: []DataFileMeta{l.Level0()[0], l.RunOfLevel(3).Files[0]}}, o)
	// The merge of n and u3 writes b9, c1 and d10 (a stays deleted), one
	// file each; d10 supersedes d0 at level 5; u3's vector goes with it.
	if got := runsString(l.SortedRuns()); got != "out-1+out-2+out-3@4 u5@5" {
		t.Fatalf("runs = %s", got)
	}
	if got := dvString(res.DVs); got != "u5{0,1}" {
		t.Fatalf("deletion vectors = %s", got)
	}
	if !res.DVChanged {
		t.Fatal("DVChanged is false")
	}
	if got := dvString(dvs); got != "u3{0} u5{0}" {
		t.Fatalf("input deletion vectors changed: %s", got)
	}
	want := map[string]string{"b": "b9", "c": "c1", "d": "d10"}
	if got := b.visibleRows(l, res.DVs); !reflect.DeepEqual(got, want) {
		t.Fatalf("visible rows = %v, want %v", got, want)
	}
}

func TestCompactKeepsDeletesWithoutDeletionVectors(t *testing.T) {
	o := CompactionOptions{SmallFileSize: 1 << 30}
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("u5", 5, ins("a", 0, "a0"), ins("b", 0, "b0")),
		b.file("n1", 0, del("a", 4)),
		b.file("n0", 0, ins("a", 3, "a3"), ins("b", 2, "b2")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(bytes.Compare, CompactUnit{OutputLevel: 4, Files: l.Level0()}, l, o)
	res, err := Compact(plan, l, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 1 {
		t.Fatalf("added %v", names(res.Added))
	}
	got := b.files[res.Added[0].FileName]
	want := []memRow{del("a", 4), ins("b", 2, "b2")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output rows = %v, want %v (the delete must stay above a0)", got, want)
	}
	if res.DVChanged || len(res.DVs) != 0 {
		t.Fatalf("deletion vectors appeared without deletion-vector mode: %s", dvString(res.DVs))
	}
}

func TestCompactErrorRemovesOutput(t *testing.T) {
	o := CompactionOptions{SmallFileSize: 1 << 30, DeletionVectors: true}
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("s1", 0, ins("a", 1, "a"), ins("c", 1, "c")),
		b.file("s2", 0, ins("b", 2, "b")),
		b.file("t1", 0, ins("x", 3, "x"), ins("z", 3, "z")),
		b.file("t2", 0, ins("y", 4, "y")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(bytes.Compare, CompactUnit{OutputLevel: 5, Files: l.Level0()}, l, o)
	if len(plan.Steps) != 1 || len(plan.Steps[0].Sections) != 2 {
		t.Fatalf("plan = %s", stepsString(plan))
	}
	b.failOpen = "t2" // fails in the second section, after the first was written
	b.rollRows = 1
	before := len(b.files)
	if _, err := Compact(plan, l, DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("err = %v", err)
	}
	if len(b.files) != before {
		t.Fatalf("%d files left behind", len(b.files)-before)
	}
}

func TestCompactRejectsUnorderedRun(t *testing.T) {
	b := newMemBucket()
	bad := b.file("bad", 0, ins("a", 1, ""), ins("b", 1, ""))
	b.files["bad"] = []memRow{ins("b", 1, ""), ins("a", 1, "")} // rows out of order
	l, err := NewLevels(bytes.Compare, []DataFileMeta{bad, b.file("o", 0, ins("a", 0, ""))}, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(bytes.Compare, CompactUnit{OutputLevel: 5, Files: l.Level0()}, l, CompactionOptions{SmallFileSize: 1 << 30, DeletionVectors: true})
	if _, err := Compact(plan, l, DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "do not ascend") {
		t.Fatalf("err = %v", err)
	}
}

// A unit holding only part of its output level (level-0 files plus the
// level-1 files they overlap): no output file may span the level-1 file the
// unit leaves alone.
func TestCompactPartialOutputLevel(t *testing.T) {
	o := CompactionOptions{SmallFileSize: 1 << 30, DeletionVectors: true}
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("A", 1, ins("a", 1, "a1"), ins("b", 1, "b1")),
		b.file("B", 1, ins("c", 1, "c1"), ins("d", 1, "d1")),
		b.file("C", 1, ins("e", 1, "e1"), ins("f", 1, "f1")),
		b.file("x", 0, ins("a", 5, "a5")),
		b.file("y", 0, ins("f", 6, "f6")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	unit := CompactUnit{OutputLevel: 1, Files: []DataFileMeta{l.Level0()[0], l.Level0()[1], l.RunOfLevel(1).Files[0], l.RunOfLevel(1).Files[2]}}
	res := compactUnit(t, b, l, DeletionVectors{}, unit, o)
	if got := runsString(l.SortedRuns()); got != "out-1+B+out-2@1" {
		t.Fatalf("runs = %s", got)
	}
	if res.DVChanged {
		t.Fatalf("deletion vectors changed: %s", dvString(res.DVs))
	}
	want := map[string]string{"a": "a5", "b": "b1", "c": "c1", "d": "d1", "e": "e1", "f": "f6"}
	if got := b.visibleRows(l, res.DVs); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows = %v", got)
	}
}
