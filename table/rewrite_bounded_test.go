package table

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// boundedTree builds a standalone-correct bucket: the max level holds every
// key in files of span keys each, and the levels above hold newer versions
// of random keys, each level one file over the whole key space; the older
// versions are marked in the deletion vectors.
func boundedTree(t *testing.T, rng *rand.Rand, b *memBucket, keys, span int, upper []int32) (*Levels, DeletionVectors) {
	t.Helper()
	const numLevels = 6
	key := func(i int) string { return fmt.Sprintf("k%03d", i) }
	var files []DataFileMeta
	live := map[string]struct {
		file string
		pos  int64
	}{}
	for lo := 0; lo < keys; lo += span {
		var rows []memRow
		for i := lo; i < min(lo+span, keys); i++ {
			rows = append(rows, ins(key(i), 1, "v1"))
		}
		name := fmt.Sprintf("deep-%03d", lo)
		files = append(files, b.file(name, numLevels-1, rows...))
		for p, r := range rows {
			live[r.key] = struct {
				file string
				pos  int64
			}{name, int64(p)}
		}
	}
	dvs := DeletionVectors{}
	// Deepest upper level first: seq grows towards level 1.
	for n, lv := range upper {
		seq := int64(n + 2)
		var rows []memRow
		for i := range keys {
			if rng.IntN(3) == 0 || i == 0 || i == keys-1 {
				rows = append(rows, ins(key(i), seq, fmt.Sprintf("v%d", seq)))
			}
		}
		name := fmt.Sprintf("up-%d", lv)
		files = append(files, b.file(name, lv, rows...))
		for p, r := range rows {
			old := live[r.key]
			dvs.Add(old.file, old.pos)
			live[r.key] = struct {
				file string
				pos  int64
			}{name, int64(p)}
		}
	}
	l, err := NewLevels(bytes.Compare, files, numLevels)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckBucket(l, dvs, b); err != nil {
		t.Fatalf("test tree: %v", err)
	}
	return l, dvs
}

// boundedStep is the step of a full compaction to the max level limited to
// (after, upTo]: every live file that overlaps the bounds, one run per level.
func boundedStep(l *Levels, after, upTo []byte) CompactPlan {
	var section []SortedRun
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		var run SortedRun
		for _, f := range l.RunOfLevel(lv).Files {
			if (after == nil || bytes.Compare(f.MaxKey, after) > 0) && (upTo == nil || bytes.Compare(f.MinKey, upTo) <= 0) {
				run.Files = append(run.Files, f)
			}
		}
		if len(run.Files) > 0 {
			section = append(section, run)
		}
	}
	return CompactPlan{OutputLevel: l.MaxLevel(), DropDelete: true, Steps: []CompactStep{{
		Kind: StepRewrite, Sections: [][]SortedRun{section}, Bounds: &KeyBounds{After: after, UpTo: upTo},
	}}}
}

// A full compaction cut by key range at the max level's file boundaries:
// after every step the bucket is standalone-correct and reads the same rows,
// and at the end only max-level files remain, with no deletion vector.
func TestBoundedRewriteSteps(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			b := newMemBucket()
			b.rollRows = 1 + rng.IntN(12)
			keys, span := 20+rng.IntN(60), 1+rng.IntN(15)
			l, dvs := boundedTree(t, rng, b, keys, span, []int32{4, 3, 2}[:1+rng.IntN(3)])
			want := b.visibleRows(l, dvs)
			var cuts [][]byte
			for _, f := range l.RunOfLevel(l.MaxLevel()).Files {
				if rng.IntN(2) == 0 {
					cuts = append(cuts, f.MaxKey)
				}
			}
			cuts = append(cuts, nil)
			late := rng.IntN(len(cuts))
			var after []byte
			for i, upTo := range cuts {
				if i == late {
					// A barrier round puts newer rows at level 1 between two
					// steps; the later steps take in those past the bounds
					// done, the others stay.
					dvs = dvs.Clone()
					var rows []memRow
					for k := range keys {
						if rng.IntN(4) == 0 {
							key := fmt.Sprintf("k%03d", k)
							rows = append(rows, ins(key, 100, "late"))
							supersede(t, b, l, dvs, key)
							want[key] = "late"
						}
					}
					if len(rows) > 0 {
						if err := l.Apply(nil, []DataFileMeta{b.file("late", 1, rows...)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				plan := boundedStep(l, after, upTo)
				res, err := Compact(plan, l, dvs, b)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if err := l.Apply(res.Deleted, res.Added); err != nil {
					t.Fatalf("step %d: apply: %v", i, err)
				}
				dvs = res.DVs
				if err := CheckBucket(l, dvs, b); err != nil {
					t.Fatalf("after step %d: %v", i, err)
				}
				if got := b.visibleRows(l, dvs); !maps.Equal(got, want) {
					t.Fatalf("after step %d the bucket reads %v, want %v", i, got, want)
				}
				after = upTo
			}
			if got := runsString(l.SortedRuns()); strings.Contains(got, "up-") || strings.Contains(got, "deep-") || (late == 0 && strings.Contains(got, "late")) {
				t.Fatalf("inputs left after the last step: %s", got)
			}
			if len(dvs) != 0 && late == 0 {
				t.Fatalf("deletion vectors left after the last step: %s", dvString(dvs))
			}
		})
	}
}

// supersede marks the live level >= 1 row of key deleted, if there is one.
func supersede(t *testing.T, b *memBucket, l *Levels, dvs DeletionVectors, key string) {
	t.Helper()
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			for p, r := range b.files[f.FileName] {
				if r.key == key && !dvs.IsDeleted(f.FileName, int64(p)) {
					dvs.Add(f.FileName, int64(p))
					return
				}
			}
		}
	}
}

// A bounded step may not leave a file of the output level that reaches
// outside its bounds: the output would overlap it.
func TestBoundedRewriteRejectsStraddlingOutputFile(t *testing.T) {
	b := newMemBucket()
	l, dvs := boundedTree(t, rand.New(rand.NewPCG(1, 2)), b, 10, 10, []int32{3})
	plan := boundedStep(l, nil, []byte("k004"))
	if _, err := Compact(plan, l, dvs, b); err == nil || !strings.Contains(err.Error(), "outside the step's bounds") {
		t.Fatalf("Compact = %v, want an error about the bounds", err)
	}
}

// Over parquet files: bounded steps cut at the deep files' boundaries read
// back the rows the uncut bucket holds after every step, and OpenRange
// starts and ends at the bounds instead of reading the whole file.
func TestBoundedRewriteDataFiles(t *testing.T) {
	b := newKVBucket(t, 1<<30)
	const n = 3 * bucketFilesChunkRows
	var deep [3][]int32
	var top []int32
	for k := range int32(n) {
		deep[k/bucketFilesChunkRows] = append(deep[k/bucketFilesChunkRows], k)
		if k%5 == 0 {
			top = append(top, k)
		}
	}
	files := []DataFileMeta{writeKVNulls(t, b, "top.parquet", 4, top, n)}
	dvs := DeletionVectors{}
	for i, ks := range deep {
		f := writeKVNulls(t, b, fmt.Sprintf("deep-%d.parquet", i), 5, ks, 0)
		files = append(files, f)
		for p, k := range ks {
			if k%5 == 0 {
				dvs.Add(f.FileName, int64(p))
			}
		}
	}
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	l, err := NewLevels(cmp, files, 6)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckBucket(l, dvs, b); err != nil {
		t.Fatal(err)
	}
	want := readVisible(t, b, l, dvs)

	lo, _ := b.EncodeKey(files[2].MinKey)
	hi, _ := b.EncodeKey(files[2].MaxKey)
	it, err := b.OpenRange(files[0], nil, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for it.Next() {
		if k := it.Key(); bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) > 0 {
			t.Fatalf("OpenRange [%x, %x] yields %x", lo, hi, k)
		}
		rows++
	}
	it.Close()
	if rows != bucketFilesChunkRows/5 {
		t.Fatalf("OpenRange read %d rows of the top file, want the %d in range", rows, bucketFilesChunkRows/5)
	}

	var after []byte
	for i, upTo := range [][]byte{files[1].MaxKey, files[2].MaxKey, nil} {
		var section []SortedRun
		for lv := 4; lv <= 5; lv++ {
			var run SortedRun
			for _, f := range l.RunOfLevel(lv).Files {
				if (after == nil || cmp(f.MaxKey, after) > 0) && (upTo == nil || cmp(f.MinKey, upTo) <= 0) {
					run.Files = append(run.Files, f)
				}
			}
			section = append(section, run)
		}
		plan := CompactPlan{OutputLevel: 5, DropDelete: true, Steps: []CompactStep{{
			Kind: StepRewrite, Sections: [][]SortedRun{section}, Bounds: &KeyBounds{After: after, UpTo: upTo}}}}
		res, err := Compact(plan, l, dvs, b)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := l.Apply(res.Deleted, res.Added); err != nil {
			t.Fatal(err)
		}
		dvs = res.DVs
		if err := CheckBucket(l, dvs, b); err != nil {
			t.Fatalf("after step %d: %v", i, err)
		}
		if got := readVisible(t, b, l, dvs); !maps.Equal(got, want) {
			t.Fatalf("after step %d: %d rows read back, want %d", i, len(got), len(want))
		}
		if live := len(l.RunOfLevel(4).Files); live != map[bool]int{true: 0, false: 1}[upTo == nil] {
			t.Fatalf("after step %d: %d top files", i, live)
		}
		after = upTo
	}
	if len(dvs) != 0 {
		t.Fatalf("deletion vectors left: %s", dvString(dvs))
	}
}
