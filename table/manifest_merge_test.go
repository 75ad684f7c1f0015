package table

import (
	"fmt"
	"reflect"
	"testing"
)

// churn runs commits against a model: each round appends a level-0 file to
// a bucket, and every third round compacts that bucket's level-0 files into
// one level-5 file replacing the previous one. It returns the model of the
// live files (name -> level).
func churn(t testing.TB, tbl *Table, rounds int, check func(round int, snap int64, model map[string]int32)) map[string]int32 {
	model := map[string]int32{}
	var l0 [2][]ManifestEntry
	var l5 [2]*ManifestEntry
	// Identifiers grow per user across calls: take them from the snapshot id.
	nextID := func() int64 {
		id, _, err := tbl.LatestSnapshotID()
		if err != nil {
			t.Fatal(err)
		}
		return id + 1
	}
	for round := 0; round < rounds; round++ {
		b := int32(round % 2)
		f := commitTestFile(t, tbl, b, 0, fmt.Sprintf("k%03d", round), fmt.Sprintf("k%03d~", round), 1)
		r, err := tbl.CommitAppend([]ManifestEntry{f}, commitInfo("w", nextID()))
		if err != nil {
			t.Fatal(err)
		}
		model[f.File.FileName] = 0
		l0[b] = append(l0[b], f)
		if check != nil {
			check(round, r.SnapshotID, model)
		}
		if round%3 != 2 {
			continue
		}
		out := commitTestFile(t, tbl, b, 5, "k", "k~", 1)
		ch := CompactChange{Deleted: l0[b], Added: []ManifestEntry{out}}
		if l5[b] != nil {
			ch.Deleted = append(ch.Deleted, *l5[b])
			delete(model, l5[b].File.FileName)
		}
		for _, e := range l0[b] {
			delete(model, e.File.FileName)
		}
		if r, err = tbl.CommitCompact(ch, commitInfo("c", nextID())); err != nil {
			t.Fatal(err)
		}
		model[out.File.FileName] = 5
		l0[b], l5[b] = nil, &out
		if check != nil {
			check(round, r.SnapshotID, model)
		}
	}
	return model
}

func manifestsOf(t testing.TB, tbl *Table, snap int64) []ManifestFileMeta {
	s, err := tbl.Snapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := tbl.meta.dataManifests(s)
	if err != nil {
		t.Fatal(err)
	}
	return metas
}

func TestManifestMinorMergeBoundsTheManifestCount(t *testing.T) {
	tbl := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "5"})
	most := 0
	churn(t, tbl, 60, func(round int, snap int64, model map[string]int32) {
		n := len(manifestsOf(t, tbl, snap))
		most = max(most, n)
		// base: at most minCount-1 unmerged plus merged ones, then the delta.
		if n > 7 {
			t.Fatalf("snapshot %d has %d data manifests", snap, n)
		}
		if round%10 == 0 {
			fresh, _ := Open(tbl.fio, tbl.Dir())
			if got := liveNames(t, fresh, snap); !reflect.DeepEqual(got, model) {
				t.Fatalf("snapshot %d: live %v, model %v", snap, got, model)
			}
		}
	})
	if most < 5 {
		t.Fatalf("merging never had anything to do (most %d manifests)", most)
	}
}

func TestManifestFullCompactionDropsCancelledPairs(t *testing.T) {
	tbl := newCommitTestTable(t, map[string]string{
		OptionManifestFullCompaction: "1 b",
		OptionManifestMergeMinCount:  "1000",
	})
	model := churn(t, tbl, 30, nil)
	latest, _, _ := tbl.LatestSnapshotID()
	s, _ := tbl.Snapshot(latest)
	base, err := tbl.meta.readManifestList(s.BaseManifestList)
	if err != nil {
		t.Fatal(err)
	}
	adds := 0
	for _, m := range base {
		if m.NumDeletedFile != 0 {
			t.Fatalf("base manifest %s keeps %d DELETE entries after full compaction", m.FileName, m.NumDeletedFile)
		}
		adds += int(m.NumAddedFiles)
	}
	// The base holds exactly the files live before the last commit.
	prev := liveNames(t, tbl, latest-1)
	if adds != len(prev) {
		t.Fatalf("base has %d ADD entries, %d files were live", adds, len(prev))
	}
	fresh, _ := Open(tbl.fio, tbl.Dir())
	if got := liveNames(t, fresh, latest); !reflect.DeepEqual(got, model) {
		t.Fatalf("live %v, model %v", got, model)
	}
}

func TestManifestWritesRollAtTheTargetSize(t *testing.T) {
	tbl := newCommitTestTable(t, map[string]string{OptionManifestTargetFileSize: "2 kb"})
	var entries []ManifestEntry
	for i := 0; i < 60; i++ {
		entries = append(entries, commitTestFile(t, tbl, 0, 0, fmt.Sprintf("k%03d", i), fmt.Sprintf("k%03d~", i), 1))
	}
	if _, err := tbl.CommitAppend(entries, commitInfo("w", 1)); err != nil {
		t.Fatal(err)
	}
	metas := manifestsOf(t, tbl, 1)
	if len(metas) < 3 {
		t.Fatalf("%d manifests for %d entries at a 2 KiB target", len(metas), len(entries))
	}
	total := int64(0)
	for _, m := range metas {
		total += m.NumAddedFiles
		if m.FileSize > 4<<10 {
			t.Fatalf("manifest of %d bytes", m.FileSize)
		}
	}
	if total != 60 || len(liveNames(t, tbl, 1)) != 60 {
		t.Fatalf("%d entries in manifests", total)
	}
}
