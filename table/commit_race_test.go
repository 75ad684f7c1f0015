package table

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Two Tables (two processes, in effect) commit to one directory at once:
// they race for snapshot ids, the loser of each race retries on the new
// latest snapshot, and nothing is lost or committed twice.
func TestCommitRaceBetweenTables(t *testing.T) {
	first := newCommitTestTable(t, map[string]string{OptionManifestMergeMinCount: "4"})
	second, err := Open(NewLocalFileIO(), first.Dir(), WithRand(rand.NewChaCha8([32]byte{9})))
	if err != nil {
		t.Fatal(err)
	}
	const perTable = 15
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	want := map[string]int32{}
	var mu sync.Mutex
	for i, tbl := range []*Table{first, second} {
		user := fmt.Sprintf("writer-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := int64(1); id <= perTable; id++ {
				f := commitTestFile(t, tbl, int32(i), 0, "a", "b", 1)
				mu.Lock()
				want[f.File.FileName] = 0
				mu.Unlock()
				if _, err := tbl.CommitAppend([]ManifestEntry{f}, commitInfo(user, id)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	latest, _, err := first.LatestSnapshotID()
	if err != nil || latest != 2*perTable {
		t.Fatalf("latest %d %v", latest, err)
	}
	seen := map[string]bool{}
	for id := int64(1); id <= latest; id++ {
		s, err := first.Snapshot(id)
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprintf("%s/%d", s.CommitUser, s.CommitIdentifier)
		if seen[k] {
			t.Fatalf("%s committed twice", k)
		}
		seen[k] = true
	}
	fresh, _ := Open(NewLocalFileIO(), first.Dir())
	if got := liveNames(t, fresh, latest); len(got) != len(want) {
		t.Fatalf("%d live files, want %d", len(got), len(want))
	}
}

// raceFileIO lets another committer publish the snapshot id a commit is
// about to take, the given number of times.
type raceFileIO struct {
	FileIO
	steal atomic.Int32
	thief func()
}

func (r *raceFileIO) PublishExclusive(tmp, target string) error {
	if strings.Contains(target, "/snapshot/snapshot-") && r.steal.Add(-1) >= 0 {
		r.thief()
	}
	return r.FileIO.PublishExclusive(tmp, target)
}

func TestCommitRetriesOnALostRaceAndGivesUpAfterTheLimit(t *testing.T) {
	base := newCommitTestTable(t, map[string]string{OptionCommitMaxRetries: "2"})
	rio := &raceFileIO{FileIO: base.fio}
	victim, err := Open(rio, base.Dir(), WithRand(rand.NewChaCha8([32]byte{3})))
	if err != nil {
		t.Fatal(err)
	}
	thiefID := int64(0)
	rio.thief = func() {
		thiefID++
		f := commitTestFile(t, base, 1, 0, "a", "b", 1)
		if _, err := base.CommitAppend([]ManifestEntry{f}, commitInfo("thief", thiefID)); err != nil {
			t.Fatal(err)
		}
	}
	rio.steal.Store(2)
	f := commitTestFile(t, victim, 0, 0, "a", "b", 1)
	r, err := victim.CommitAppend([]ManifestEntry{f}, commitInfo("victim", 1))
	if err != nil || r.SnapshotID != 3 {
		t.Fatalf("after two lost races: %+v %v", r, err)
	}
	manifestsBefore, _ := victim.fio.List(victim.paths.manifestDir())
	rio.steal.Store(3)
	g := commitTestFile(t, victim, 0, 0, "c", "d", 1)
	_, err = victim.CommitAppend([]ManifestEntry{g}, commitInfo("victim", 2))
	if !errors.Is(err, errSnapshotExists) {
		t.Fatalf("three lost races with two retries: %v", err)
	}
	// What the failed commit wrote is gone; the thief's files remain.
	manifestsAfter, _ := victim.fio.List(victim.paths.manifestDir())
	thiefFiles := 3 * 3 // each thief commit: manifest, delta list, base list
	if len(manifestsAfter) != len(manifestsBefore)+thiefFiles {
		t.Fatalf("manifest files %d -> %d, want +%d", len(manifestsBefore), len(manifestsAfter), thiefFiles)
	}
	if _, err := base.fio.Stat(base.paths.snapshotPath(7)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a snapshot beyond the races exists")
	}
}
