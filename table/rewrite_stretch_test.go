package table

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// Merges of data files whose runs alternate in stretches of every length
// (one row to several read chunks), with keys in more than one run,
// retractions and deletion vectors, write exactly the newest live row of
// each key: whole, and cut into bounded steps that leave the rows they did
// not take live where they were.
func TestCompactStretchesMatchModel(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { stretchesMatchModel(t, seed) })
	}
}

func stretchesMatchModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := newKVBucket(t, 1<<30)
	nRuns := 2 + rng.IntN(3)
	runs := make([][]kvRow, nRuns) // run i is at level i+1: newer rows above
	seqBase := func(run int) int64 { return int64(nRuns-run) << 32 }
	run, left := 0, 0
	for k := range int32(3*bucketFilesChunkRows + rng.IntN(bucketFilesChunkRows)) {
		if left == 0 {
			run = rng.IntN(nRuns)
			switch rng.IntN(3) {
			case 0:
				left = 1 + rng.IntN(3)
			case 1:
				left = 10 + rng.IntN(100)
			default:
				left = 500 + rng.IntN(2*bucketFilesChunkRows)
			}
		}
		left--
		in := []int{run}
		if rng.IntN(20) == 0 { // the key in a second run too
			in = append(in, rng.IntN(nRuns))
		}
		for _, r := range in {
			if n := len(runs[r]); n > 0 && runs[r][n-1].k == k {
				continue
			}
			kind := KindInsert
			if rng.IntN(25) == 0 {
				kind = KindDelete
			}
			runs[r] = append(runs[r], kvRow{k: k, v: fmt.Sprintf("r%d-%d", r, k), seq: seqBase(r) + int64(k), kind: kind})
		}
	}
	var files []DataFileMeta
	dvs := DeletionVectors{}
	for r, rows := range runs {
		if len(rows) == 0 {
			continue
		}
		f := writeKV(t, b, fmt.Sprintf("run-%d.parquet", r), int32(r+1), rows)
		files = append(files, f)
		for range rng.IntN(4) {
			lo := rng.IntN(len(rows))
			hi := min(len(rows), lo+1+rng.IntN(300))
			for p := lo; p < hi; p++ {
				dvs.Add(f.FileName, int64(p))
			}
		}
	}
	// The model: each key's newest row not deleted; none if a retraction.
	newest := map[int32]kvRow{}
	for r, rows := range runs {
		for p, row := range rows {
			if dvs.IsDeleted(fmt.Sprintf("run-%d.parquet", r), int64(p)) {
				continue
			}
			if cur, ok := newest[row.k]; !ok || row.seq > cur.seq {
				newest[row.k] = row
			}
		}
	}
	want := map[int32]string{}
	for k, row := range newest {
		if !row.kind.IsRetract() {
			want[k] = row.v
		}
	}
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	if rng.IntN(2) == 0 {
		l, err := NewLevels(cmp, files, 6)
		if err != nil {
			t.Fatal(err)
		}
		plan := PlanCompaction(cmp, CompactUnit{OutputLevel: 5, Files: l.AllFiles()}, l, CompactionOptions{SmallFileSize: 1 << 40, DeletionVectors: true})
		res, err := Compact(plan, l, dvs, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Apply(res.Deleted, res.Added); err != nil {
			t.Fatal(err)
		}
		if got := readVisible(t, b, l, res.DVs); !maps.Equal(got, want) {
			t.Fatalf("full merge of %d runs: %d rows read back, want %d", nRuns, len(got), len(want))
		}
		return
	}
	// Bounded steps at random cuts, into level 6 below every run.
	l, err := NewLevels(cmp, files, 7)
	if err != nil {
		t.Fatal(err)
	}
	var cuts []int32
	for c := int32(rng.IntN(500)); c < 4*bucketFilesChunkRows; c += int32(1 + rng.IntN(3*bucketFilesChunkRows)) {
		cuts = append(cuts, c)
	}
	var after []byte
	for i := 0; i <= len(cuts); i++ {
		var upTo []byte
		if i < len(cuts) {
			upTo = EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(int64(cuts[i]))})
		}
		var section []SortedRun
		for _, f := range files {
			if l.contains(f) && (after == nil || cmp(f.MaxKey, after) > 0) && (upTo == nil || cmp(f.MinKey, upTo) <= 0) {
				section = append(section, SortedRun{Files: []DataFileMeta{f}})
			}
		}
		if len(section) == 0 {
			after = upTo
			continue
		}
		plan := CompactPlan{OutputLevel: 6, DropDelete: true, Steps: []CompactStep{{
			Kind: StepRewrite, Sections: [][]SortedRun{section}, Bounds: &KeyBounds{After: after, UpTo: upTo}}}}
		res, err := Compact(plan, l, dvs, b)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := l.Apply(res.Deleted, res.Added); err != nil {
			t.Fatal(err)
		}
		dvs = res.DVs
		// Keys up to the cut come from level 6 now, the others from the
		// runs as before: a read of everything still gives the model.
		if got := readNewestVisible(t, b, l, dvs); !maps.Equal(got, want) {
			t.Fatalf("after step %d of %d: %d rows read back, want %d", i, len(cuts)+1, len(got), len(want))
		}
		after = upTo
	}
	if len(dvs) != 0 {
		t.Fatalf("deletion vectors left after the last step: %s", dvString(dvs))
	}
}

// contains reports whether f is still in the tree.
func (l *Levels) contains(f DataFileMeta) bool {
	for _, g := range l.AllFiles() {
		if g.FileName == f.FileName {
			return true
		}
	}
	return false
}

// readNewestVisible reads every live row of the tree and keeps each key's
// newest, dropping it if that is a retraction.
func readNewestVisible(t *testing.T, b *DataBucketFiles, l *Levels, dvs DeletionVectors) map[int32]string {
	t.Helper()
	type row struct {
		v       string
		seq     int64
		retract bool
	}
	newest := map[int32]row{}
	for _, f := range l.AllFiles() {
		it, err := b.Open(f, dvs[f.FileName])
		if err != nil {
			t.Fatal(err)
		}
		rows := it.(*dataFileRows)
		for rows.Next() {
			k := rows.int32At(0)
			if cur, ok := newest[k]; !ok || rows.Seq() > cur.seq {
				newest[k] = row{v: rows.stringAt(1), seq: rows.Seq(), retract: rows.Kind().IsRetract()}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	out := map[int32]string{}
	for k, r := range newest {
		if !r.retract {
			out[k] = r.v
		}
	}
	return out
}
