package table

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// testFile builds the metadata of a data file whose keys are raw bytes
// ordered by bytes.Compare (the pure LSM logic never decodes keys).
func testFile(name string, level int32, minKey, maxKey string, size, minSeq, maxSeq int64) DataFileMeta {
	zero := int64(0)
	return DataFileMeta{
		FileName: name, Level: level, FileSize: size, RowCount: 1,
		MinKey: []byte(minKey), MaxKey: []byte(maxKey),
		MinSequenceNumber: minSeq, MaxSequenceNumber: maxSeq, DeleteRowCount: &zero,
	}
}

func names(files []DataFileMeta) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.FileName)
	}
	return out
}

func runsString(runs []LevelSortedRun) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, strings.Join(names(r.Run.Files), "+")+"@"+string(rune('0'+r.Level)))
	}
	return strings.Join(parts, " ")
}

func TestLevelsLevel0Order(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	a := testFile("a", 0, "k", "k", 1, 5, 9)
	b := testFile("b", 0, "k", "k", 1, 3, 9) // same max seq, smaller min seq: before a
	c := testFile("c", 0, "k", "k", 1, 3, 9)
	c.CreationTimeMs = ms(100) // same seqs as b, later creation: after b
	d := testFile("d", 0, "k", "k", 1, 3, 9)
	d.CreationTimeMs = ms(100)                // same as c but name sorts after
	e := testFile("e", 0, "k", "k", 1, 0, 12) // newest max seq first
	f := testFile("f", 0, "k", "k", 1, 0, 1)
	l, err := NewLevels(bytes.Compare, []DataFileMeta{f, d, a, c, e, b}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(l.Level0()), []string{"e", "b", "c", "d", "a", "f"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("level 0 order = %v, want %v", got, want)
	}
}

func TestLevelsBuild(t *testing.T) {
	tests := []struct {
		name       string
		files      []DataFileMeta
		numLevels  int
		wantErr    string
		wantRuns   string
		wantLevels int
		wantHigh   int
		wantSize   int64
	}{
		{name: "empty", numLevels: 6, wantRuns: "", wantLevels: 6, wantHigh: -1},
		{name: "too few levels", numLevels: 1, wantErr: "at least 2"},
		{
			name: "level 0 only", numLevels: 6, wantLevels: 6, wantHigh: 0, wantSize: 3,
			files:    []DataFileMeta{testFile("old", 0, "a", "z", 1, 0, 1), testFile("new", 0, "a", "c", 2, 2, 3)},
			wantRuns: "new@0 old@0",
		},
		{
			name: "upper levels sorted by min key", numLevels: 6, wantLevels: 6, wantHigh: 5, wantSize: 111,
			files: []DataFileMeta{
				testFile("l5b", 5, "m", "z", 50, 0, 1), testFile("l5a", 5, "a", "l", 50, 0, 1),
				testFile("l2", 2, "c", "d", 10, 2, 2), testFile("l0", 0, "a", "a", 1, 3, 3),
			},
			wantRuns: "l0@0 l2@2 l5a+l5b@5",
		},
		{
			name: "deeper restored file widens the tree", numLevels: 3, wantLevels: 8, wantHigh: 7, wantSize: 1,
			files:    []DataFileMeta{testFile("deep", 7, "a", "b", 1, 0, 0)},
			wantRuns: "deep@7",
		},
		{
			name: "overlap in a level is an error", numLevels: 6,
			files:   []DataFileMeta{testFile("x", 3, "a", "m", 1, 0, 0), testFile("y", 3, "m", "z", 1, 0, 0)},
			wantErr: "level 3: files x and y overlap",
		},
		{
			name: "same file twice is an error", numLevels: 6,
			files:   []DataFileMeta{testFile("x", 0, "a", "m", 1, 0, 0), testFile("x", 0, "a", "m", 1, 0, 0)},
			wantErr: "added twice",
		},
		{
			name: "negative level", numLevels: 6,
			files:   []DataFileMeta{testFile("x", -1, "a", "m", 1, 0, 0)},
			wantErr: "negative level",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLevels(bytes.Compare, tt.files, tt.numLevels)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := runsString(l.SortedRuns()); got != tt.wantRuns {
				t.Errorf("runs = %q, want %q", got, tt.wantRuns)
			}
			if l.NumLevels() != tt.wantLevels || l.MaxLevel() != tt.wantLevels-1 {
				t.Errorf("levels = %d (max %d), want %d", l.NumLevels(), l.MaxLevel(), tt.wantLevels)
			}
			if got := l.NonEmptyHighestLevel(); got != tt.wantHigh {
				t.Errorf("highest = %d, want %d", got, tt.wantHigh)
			}
			if got := l.TotalSize(); got != tt.wantSize {
				t.Errorf("size = %d, want %d", got, tt.wantSize)
			}
			if got := l.NumSortedRuns(); got != len(l.SortedRuns()) {
				t.Errorf("NumSortedRuns = %d, SortedRuns has %d", got, len(l.SortedRuns()))
			}
			if got := len(l.AllFiles()); got != len(tt.files) {
				t.Errorf("AllFiles has %d files, want %d", got, len(tt.files))
			}
		})
	}
}

func TestLevelsApply(t *testing.T) {
	base := func(t *testing.T) *Levels {
		l, err := NewLevels(bytes.Compare, []DataFileMeta{
			testFile("n1", 0, "b", "c", 1, 10, 11), testFile("n0", 0, "a", "z", 1, 8, 9),
			testFile("l4", 4, "a", "f", 10, 1, 5), testFile("l5", 5, "a", "z", 100, 0, 7),
		}, 6)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	up := func(f DataFileMeta, level int32) DataFileMeta { f.Level = level; return f }
	tests := []struct {
		name     string
		deleted  []DataFileMeta
		added    []DataFileMeta
		wantErr  string
		wantRuns string
	}{
		{
			name:     "upgrade level 0 file in place",
			deleted:  []DataFileMeta{testFile("n1", 0, "b", "c", 1, 10, 11)},
			added:    []DataFileMeta{up(testFile("n1", 0, "b", "c", 1, 10, 11), 3)},
			wantRuns: "n0@0 n1@3 l4@4 l5@5",
		},
		{
			name:     "rewrite into two files at level 4",
			deleted:  []DataFileMeta{testFile("n1", 0, "b", "c", 1, 10, 11), testFile("n0", 0, "a", "z", 1, 8, 9), testFile("l4", 4, "a", "f", 10, 1, 5)},
			added:    []DataFileMeta{testFile("o2", 4, "m", "z", 6, 1, 11), testFile("o1", 4, "a", "k", 6, 1, 11)},
			wantRuns: "o1+o2@4 l5@5",
		},
		{
			name:     "new level 0 file goes first",
			added:    []DataFileMeta{testFile("n2", 0, "a", "b", 1, 12, 12)},
			wantRuns: "n2@0 n1@0 n0@0 l4@4 l5@5",
		},
		{
			name:    "delete of a missing file",
			deleted: []DataFileMeta{testFile("ghost", 4, "a", "b", 1, 0, 0)},
			wantErr: "cannot delete file ghost: not at level 4",
		},
		{
			name:    "delete at the wrong level",
			deleted: []DataFileMeta{testFile("l4", 5, "a", "f", 10, 1, 5)},
			wantErr: "cannot delete file l4: not at level 5",
		},
		{
			name:    "add that overlaps its level",
			deleted: []DataFileMeta{testFile("n1", 0, "b", "c", 1, 10, 11)},
			added:   []DataFileMeta{up(testFile("n1", 0, "b", "c", 1, 10, 11), 4)},
			wantErr: "level 4: files l4 and n1 overlap",
		},
		{
			name:    "level beyond max",
			added:   []DataFileMeta{testFile("deep", 6, "a", "b", 1, 0, 0)},
			wantErr: "outside 0..5",
		},
		{
			name:    "duplicate delete",
			deleted: []DataFileMeta{testFile("l5", 5, "a", "z", 100, 0, 7), testFile("l5", 5, "a", "z", 100, 0, 7)},
			wantErr: "deleted twice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := base(t)
			before := runsString(l.SortedRuns())
			err := l.Apply(tt.deleted, tt.added)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got := runsString(l.SortedRuns()); got != before {
					t.Fatalf("failed Apply changed the tree: %q, was %q", got, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := runsString(l.SortedRuns()); got != tt.wantRuns {
				t.Errorf("runs = %q, want %q", got, tt.wantRuns)
			}
		})
	}
}

func TestLevelsFromEntries(t *testing.T) {
	p1, p2 := []byte{0, 0, 0, 1, 1}, []byte{0, 0, 0, 1, 2}
	e := func(kind FileKind, part []byte, bucket int32, f DataFileMeta) ManifestEntry {
		return ManifestEntry{Kind: kind, Partition: part, Bucket: bucket, TotalBuckets: 2, File: f}
	}
	live := []ManifestEntry{
		e(FileAdd, p1, 0, testFile("a", 0, "a", "c", 1, 3, 3)),
		e(FileAdd, p1, 1, testFile("b", 5, "a", "c", 1, 0, 2)),
		e(FileAdd, p2, 0, testFile("c", 5, "a", "c", 1, 0, 2)),
		e(FileAdd, p1, 0, testFile("d", 5, "a", "c", 1, 0, 2)),
	}
	groups := GroupByBucket(live)
	if len(groups) != 3 {
		t.Fatalf("got %d buckets, want 3", len(groups))
	}
	k := BucketKey{Partition: string(p1), Bucket: 0}
	l, err := NewLevelsFromEntries(bytes.Compare, groups[k], 6)
	if err != nil {
		t.Fatal(err)
	}
	if got := runsString(l.SortedRuns()); got != "a@0 d@5" {
		t.Fatalf("runs = %q", got)
	}
	upgraded := testFile("a", 4, "a", "c", 1, 3, 3)
	if err := l.ApplyEntries([]ManifestEntry{
		e(FileDelete, p1, 0, testFile("a", 0, "a", "c", 1, 3, 3)), e(FileAdd, p1, 0, upgraded),
	}); err != nil {
		t.Fatal(err)
	}
	if got := runsString(l.SortedRuns()); got != "a@4 d@5" {
		t.Fatalf("runs after upgrade = %q", got)
	}
	if _, err := NewLevelsFromEntries(bytes.Compare, live, 6); err == nil || !strings.Contains(err.Error(), "belongs to bucket") {
		t.Fatalf("mixed buckets: err = %v", err)
	}
	if _, err := NewLevelsFromEntries(bytes.Compare, []ManifestEntry{e(FileDelete, p1, 0, upgraded)}, 6); err == nil {
		t.Fatal("DELETE entry in a live listing was accepted")
	}
}
