package listing

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lakestate/lakestate/table"
)

func TestFoldUpgradeInEitherOrder(t *testing.T) {
	for _, addFirst := range []bool{true, false} {
		h := newHistory()
		s := NewLiveSet(h.BucketPath)
		l0 := entry(table.FileAdd, 0, 0, "data-a.parquet", 10)
		if err := s.Seed(1, []table.ManifestEntry{l0}, "", nil); err != nil {
			t.Fatal(err)
		}
		up := l0
		up.File.Level = 1
		delta := []table.ManifestEntry{withKind(l0, table.FileDelete), up}
		if addFirst {
			delta = []table.ManifestEntry{up, withKind(l0, table.FileDelete)}
		}
		if err := s.Fold(2, delta); err != nil {
			t.Fatalf("addFirst=%t: %v", addFirst, err)
		}
		got := s.Files()
		want := []DataFile{{Partition: l0.Partition, Bucket: 0, Level: 1, Name: "data-a.parquet", Size: 10, Path: "bucket-0/data-a.parquet"}}
		if got.SnapshotID != 2 || !reflect.DeepEqual(got.Data, want) {
			t.Fatalf("addFirst=%t: got %+v, want %+v at snapshot 2", addFirst, got, want)
		}
	}
}

func TestFoldRejectsDivergenceAndKeepsSet(t *testing.T) {
	h := newHistory()
	s := NewLiveSet(h.BucketPath)
	a := entry(table.FileAdd, 0, 1, "data-a.parquet", 10)
	if err := s.Seed(3, []table.ManifestEntry{a}, "im-1", nil); err != nil {
		t.Fatal(err)
	}
	before := s.Files()
	cases := map[string]struct {
		id    int64
		delta []table.ManifestEntry
	}{
		"delete of a file not live": {4, []table.ManifestEntry{withKind(entry(0, 0, 1, "data-b.parquet", 1), table.FileDelete)}},
		"delete at the wrong level": {4, []table.ManifestEntry{withKind(entry(0, 0, 0, "data-a.parquet", 1), table.FileDelete)}},
		"add of a live file":        {4, []table.ManifestEntry{a}},
		"gap in snapshot ids":       {5, nil},
		"repeat of the snapshot":    {3, nil},
		"partial apply then error": {4, []table.ManifestEntry{
			entry(table.FileAdd, 0, 0, "data-c.parquet", 1),
			withKind(entry(0, 0, 2, "data-x.parquet", 1), table.FileDelete)}},
	}
	for name, c := range cases {
		if err := s.Fold(c.id, c.delta); err == nil {
			t.Errorf("%s: fold succeeded", name)
		}
		if after := s.Files(); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: set changed on error: %+v", name, after)
		}
	}
}

func TestSeedRejectsDeleteEntries(t *testing.T) {
	s := NewLiveSet(newHistory().BucketPath)
	if err := s.Seed(1, []table.ManifestEntry{withKind(entry(0, 0, 0, "a", 1), table.FileDelete)}, "", nil); err == nil {
		t.Fatal("seed took a DELETE entry")
	}
}

// TestFoldEqualsFullWalk checks, after every commit of a random history,
// that folding deltas yields exactly what a full walk yields.
func TestFoldEqualsFullWalk(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		h := newHistory()
		randomHistory(h, rand.New(rand.NewPCG(seed, 7)), 120)
		s := NewLiveSet(h.BucketPath)
		for id := int64(1); id <= h.latest(); id++ {
			plan, err := planRead(s, id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := apply(s, read(h, plan))
			if err != nil {
				t.Fatalf("seed %d snapshot %d: %v", seed, id, err)
			}
			fresh := NewLiveSet(h.BucketPath)
			want, err := apply(fresh, read(h, readPlan{target: id, seed: true}))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d snapshot %d: fold %+v\nfull walk %+v", seed, id, got, want)
			}
		}
	}
}

func TestIndexManifestReadOnlyWhenItsNameChanges(t *testing.T) {
	h := newHistory()
	h.indexes["im-1"] = []table.IndexManifestEntry{
		{Kind: table.FileAdd, Bucket: 0, IndexType: table.IndexTypeDeletionVectors, FileName: "index-1", FileSize: 7},
		{Kind: table.FileAdd, Bucket: 0, IndexType: "HASH", FileName: "hash-1", FileSize: 7},
	}
	h.commit([]table.ManifestEntry{entry(table.FileAdd, 0, 0, "a", 1)}, "")
	h.commit(nil, "im-1")
	h.commit([]table.ManifestEntry{entry(table.FileAdd, 0, 0, "b", 1)}, "im-1")
	h.commit(nil, "")
	s := NewLiveSet(h.BucketPath)
	step := func(id int64) LiveFiles {
		t.Helper()
		plan, err := planRead(s, id)
		if err != nil {
			t.Fatal(err)
		}
		files, err := apply(s, read(h, plan))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	step(1)
	if h.indexReads != 0 {
		t.Fatalf("%d index manifest reads for a table without one", h.indexReads)
	}
	files := step(2)
	if h.indexReads != 1 || len(files.Index) != 1 || files.Index[0].Path != "index/index-1" {
		t.Fatalf("after the index manifest appeared: %d reads, index %+v", h.indexReads, files.Index)
	}
	step(3)
	if h.indexReads != 1 {
		t.Fatalf("unchanged index manifest re-read: %d reads", h.indexReads)
	}
	if files = step(4); len(files.Index) != 0 || files.IndexManifest != "" || h.indexReads != 1 {
		t.Fatalf("after the index manifest went away: %+v, %d reads", files.Index, h.indexReads)
	}
}

func TestExpiredDeltaFallsBackToOneFullWalk(t *testing.T) {
	h := newHistory()
	randomHistory(h, rand.New(rand.NewPCG(1, 2)), 20)
	s := NewLiveSet(h.BucketPath)
	if _, err := apply(s, read(h, readPlan{target: 5, seed: true})); err != nil {
		t.Fatal(err)
	}
	randomHistory(h, rand.New(rand.NewPCG(1, 3)), 0)
	h.expired = 10
	plan, err := planRead(s, 20)
	if err != nil {
		t.Fatal(err)
	}
	r := read(h, plan)
	if !r.seeded {
		t.Fatal("a listing across expired snapshots did not fall back to a full walk")
	}
	got, err := apply(s, r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := apply(NewLiveSet(h.BucketPath), readFull(h, readPlan{target: 20, seed: true}))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after fallback: %+v, want %+v", got, want)
	}
}
