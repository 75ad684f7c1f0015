package table

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// copyDir copies the regular files of src into dst (created).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}

// The barrier rounds Java would have run on the pk-dv-parquet fixture's
// bucket f1=10/1 after snapshots 5 and 6, replayed on a copy of its files.
// Round 1 carries Skye, Marco, Alex +U up to level 4 without a rewrite and
// hides Alex 16.1 in the level-5 file (whose vector already hides Tony).
// Round 2 (Skye2, Marco2, Alex -D) is a full compaction to level 5 by size
// ratio: the delete is dropped and the vectors go with the rewritten file.
func TestCompactJavaWrittenBucket(t *testing.T) {
	root := t.TempDir()
	s := fixturePKSchema(true)
	dir := filepath.Join(root, "f1=10", "bucket-1")
	copyDir(t, filepath.Join(fixtureDir(t, "pk-dv-parquet"), "f1=10", "bucket-1"), dir)
	const (
		l5    = "data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet"
		snap5 = "data-e9932532-7b58-48a2-8952-368ec6dec536-0.parquet"
		snap6 = "data-c5916932-cdff-44eb-93af-32613a1c7004-0.parquet"
	)
	entries := entriesFromFiles(t, root, s, []fixtureFile{{10, "bucket-1/" + l5, 5}, {10, "bucket-1/" + snap5, 0}, {10, "bucket-1/" + snap6, 0}})
	for i := range entries {
		st, err := os.Stat(filepath.Join(dir, entries[i].File.FileName))
		if err != nil {
			t.Fatal(err)
		}
		entries[i].File.FileSize = st.Size()
	}
	o, err := CompactionOptionsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	_, keyTypes, _ := fieldsOf(s, s.TrimmedPrimaryKeys())
	cmp := NewKeyComparator(keyTypes)
	l, err := NewLevelsFromEntries(cmp, entries[:2], o.NumLevels)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	files, err := NewDataBucketFiles(NewLocalFileIO(), dir, s, BucketFilesOptions{
		TargetFileSize: o.TargetFileSize, NewFileName: func() string { n++; return fmt.Sprintf("data-compact-%d.parquet", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{l5: roaring.BitmapOf(4)}
	if err := CheckBucket(l, dvs, files); err != nil {
		t.Fatalf("fixture bucket: %v", err)
	}
	round := func(wantPlan, wantDVs string, want ...string) {
		t.Helper()
		unit, ok := o.Universal().PickLevel0(l.NumLevels(), l.SortedRuns())
		if !ok {
			t.Fatal("nothing picked")
		}
		plan := PlanCompaction(cmp, unit, l, o)
		if got := stepsString(plan); got != wantPlan {
			t.Fatalf("plan = %s\nwant   %s", got, wantPlan)
		}
		res, err := Compact(plan, l, dvs, files)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Apply(res.Deleted, res.Added); err != nil {
			t.Fatal(err)
		}
		dvs = res.DVs
		if err := CheckBucket(l, dvs, files); err != nil {
			t.Fatal(err)
		}
		if got := dvString(dvs); got != wantDVs {
			t.Fatalf("deletion vectors = %s, want %s", got, wantDVs)
		}
		if got := fixtureRows(t, files, l, dvs); !slices.Equal(got, want) {
			t.Fatalf("rows = %q\nwant %q", got, want)
		}
	}
	round("L4 drop=true up("+snap5+")+lookup", l5+"{0,4}",
		"Alex 21.2", "Bob 12.1", "David 17.1", "Emily 13.1", "Marco 21.1", "Skye 21.0")
	if err := l.ApplyEntries(entries[2:]); err != nil {
		t.Fatal(err)
	}
	round("L5 drop=true rw["+snap5+" "+snap6+" "+l5+"]+lookup", "",
		"Bob 12.1", "David 17.1", "Emily 13.1", "Marco 21.1", "Marco2 31.1", "Skye 21.0", "Skye2 31.0")
	if got := runsString(l.SortedRuns()); got != "data-compact-1.parquet@5" {
		t.Fatalf("runs = %s", got)
	}
}

// fixtureRows reads a bucket of the fixture schema as a deletion-vector read
// does: "f0 f3" per row, sorted.
func fixtureRows(t *testing.T, files *DataBucketFiles, l *Levels, dvs DeletionVectors) []string {
	t.Helper()
	var got []string
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			it, err := files.Open(f, dvs[f.FileName])
			if err != nil {
				t.Fatal(err)
			}
			rows := it.(*dataFileRows)
			for rows.Next() {
				got = append(got, fmt.Sprintf("%s %.1f", rows.stringAt(0), rows.float64At(3)))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
	slices.Sort(got)
	return got
}

func TestDataBucketFilesFindKeys(t *testing.T) {
	s := fixturePKSchema(true)
	dir := filepath.Join(fixtureDir(t, "pk-dv-parquet"), "f1=10", "bucket-1")
	files, err := NewDataBucketFiles(NewLocalFileIO(), dir, s, BucketFilesOptions{TargetFileSize: 1, NewFileName: func() string { return "unused" }})
	if err != nil {
		t.Fatal(err)
	}
	entries := entriesFromFiles(t, filepath.Dir(filepath.Dir(dir)), s, []fixtureFile{{10, "bucket-1/data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet", 5}})
	f := entries[0].File
	_, keyTypes, _ := fieldsOf(s, s.TrimmedPrimaryKeys())
	var keys [][]byte
	for _, k := range []struct {
		name string
		f2   int64
	}{{"Aaron", 0}, {"Alex", 0}, {"Alex", 1}, {"David", 0}, {"Tony", 0}, {"Zed", 0}} {
		enc, err := files.EncodeKey(EncodeBinaryRow(keyTypes, []Datum{BytesDatum([]byte(k.name)), IntDatum(k.f2)}))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, enc)
	}
	got, err := files.FindKeys(f, keys)
	if err != nil {
		t.Fatal(err)
	}
	it, err := files.Open(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	scanned, err := findKeysByScan(it, keys)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{-1, 0, -1, 2, 4, -1}
	if !slices.Equal(got, want) || !slices.Equal(scanned, want) {
		t.Fatalf("FindKeys = %v, scan = %v, want %v", got, scanned, want)
	}
}
