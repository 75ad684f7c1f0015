package subtask_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// compactAll stands in for the barrier's maintenance round: it merges every
// file of bucket 0 into the max level with one COMPACT commit, so the table is
// standalone-correct under deletion vectors.
func compactAll(t *testing.T, tbl *table.Table, round int64) {
	t.Helper()
	id, ok, err := tbl.LatestSnapshotID()
	if err != nil || !ok {
		t.Fatalf("no snapshot to compact: %v", err)
	}
	files, index, err := tbl.LiveFiles(id)
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.Schema()
	opts, err := table.CompactionOptionsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	var keyTypes []table.DataType
	for _, k := range s.TrimmedPrimaryKeys() {
		keyTypes = append(keyTypes, s.Fields[s.FieldIndex(k)].Type)
	}
	cmp := table.NewKeyComparator(keyTypes)
	levels, err := table.NewLevelsFromEntries(cmp, files, opts.NumLevels)
	if err != nil {
		t.Fatal(err)
	}
	if len(levels.Level0()) == 0 {
		return
	}
	dvs := table.DeletionVectors{}
	for _, e := range index {
		if e.Kind == table.FileAdd && e.IndexType == table.IndexTypeDeletionVectors {
			v, err := tbl.ReadDeletionVectors(e)
			if err != nil {
				t.Fatal(err)
			}
			dvs.Merge(v)
		}
	}
	unit := table.CompactUnit{OutputLevel: levels.MaxLevel(), Files: levels.AllFiles()}
	plan := table.PlanCompaction(cmp, unit, levels, opts)
	dir, err := tbl.BucketDir(table.EmptyBinaryRow(), 0)
	if err != nil {
		t.Fatal(err)
	}
	bf, err := table.NewDataBucketFiles(tbl.FileIO(), dir, s, table.BucketFilesOptions{TargetFileSize: opts.TargetFileSize, NewFileName: tbl.NewDataFileName})
	if err != nil {
		t.Fatal(err)
	}
	res, err := table.Compact(plan, levels, dvs, bf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.CommitCompact(res.Change(table.EmptyBinaryRow(), 0), table.CommitInfo{User: "maintenance", Identifier: round}); err != nil {
		t.Fatal(err)
	}
}

// In a deletion-vector table a flushed key is invisible until the maintenance
// round moves the barrier's level-0 run up (reads skip level 0); after the
// round and a Repin it reads back, deletes included, across many barriers.
func TestPaimonDeletionVectorTableNeedsTheRound(t *testing.T) {
	b, err := subtask.OpenPaimon(filepath.Join(t.TempDir(), "state"), subtask.PaimonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := subtask.NewStore(b)
	agg := must[*subtask.ValueState](t)(s.Value(aggLayout(0)))
	agg.Put(key(1), row(10, 1))
	if _, err := s.Flush(1); err != nil {
		t.Fatal(err)
	}
	if got := readValue(t, agg, 1); got != nil {
		t.Fatalf("a level-0 row read %v before the round; the test no longer shows why the round is mandatory", got)
	}
	s.EndBatch()
	tbl, _ := b.Table("agg")
	compactAll(t, tbl, 1)
	if err := s.Repin(); err != nil {
		t.Fatal(err)
	}
	if got := readValue(t, agg, 1); !got.Equal(row(10, 1)) {
		t.Fatalf("after the round key 1 = %v", got)
	}
	s.EndBatch()

	ref := map[int64]int64{1: 10}
	r := rand.New(rand.NewPCG(5, 5))
	for round := int64(2); round <= 8; round++ {
		for i := 0; i < 50; i++ {
			k := int64(r.IntN(40))
			if _, ok := ref[k]; ok && r.IntN(4) == 0 {
				agg.Delete(key(k))
				delete(ref, k)
			} else {
				ref[k] = round*100 + int64(i)
				agg.Put(key(k), row(ref[k], 1))
			}
		}
		if _, err := s.Flush(round); err != nil {
			t.Fatal(err)
		}
		compactAll(t, tbl, round)
		if err := s.Repin(); err != nil {
			t.Fatal(err)
		}
		for k := int64(0); k < 40; k++ {
			got := readValue(t, agg, k)
			want, ok := ref[k]
			if (got != nil) != ok || ok && got[0].Int() != want {
				t.Fatalf("round %d key %d = %v, want %d (present %v)", round, k, got, want, ok)
			}
		}
		s.EndBatch()
	}
}

// A restored table must match the deployment's deletion-vector mode.
func TestPaimonRefusesADeletionVectorMismatch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	for _, c := range []struct {
		create, reopen bool // NoDeletionVectors
		want           string
	}{{false, true, "compactor"}, {true, false, "predates deletion vectors"}} {
		dir := filepath.Join(root, c.want)
		b, err := subtask.OpenPaimon(dir, subtask.PaimonOptions{NoDeletionVectors: c.create})
		if err != nil {
			t.Fatal(err)
		}
		must[*subtask.ValueState](t)(subtask.NewStore(b).Value(aggLayout(0)))
		b.Close()
		b, err = subtask.OpenPaimon(dir, subtask.PaimonOptions{NoDeletionVectors: c.reopen})
		if err != nil {
			t.Fatal(err)
		}
		_, err = subtask.NewStore(b).Value(aggLayout(0))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("reopen with NoDeletionVectors=%v: %v, want an error mentioning %q", c.reopen, err, c.want)
		}
	}
}
