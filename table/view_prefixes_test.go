package table

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// interleavedTable is a deletion-vector table whose level 1 rewrites every
// third row of level 2, so a prefix's rows alternate between the levels.
func interleavedTable(t *testing.T) writtenTable {
	s := stateSchema()
	s.Options[OptionDeletionVectors] = "true"
	dir := t.TempDir()
	fio := NewLocalFileIO()
	old := buildStateRecord(t, s, 2500)
	defer old.Release()
	oldMeta, err := WriteDataFile(fio, filepath.Join(dir, "old.parquet"), s, old, seqRange(0, 2500), nil, DataFileOptions{Level: 2, PageRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	model := map[int]string{}
	for i, r := range rowStrings(old) {
		model[i] = r
	}
	var upd []int
	masked := roaring.New()
	for i := 0; i < 2500; i += 3 {
		upd = append(upd, i)
		masked.Add(uint32(i))
	}
	newer := buildStateRows(t, s, upd, 4242)
	defer newer.Release()
	for j, r := range rowStrings(newer) {
		model[upd[j]] = r
	}
	newMeta, err := WriteDataFile(fio, filepath.Join(dir, "new.parquet"), s, newer, seqRange(10000, len(upd)), nil, DataFileOptions{Level: 1, PageRows: 50})
	if err != nil {
		t.Fatal(err)
	}
	in := ViewInput{FIO: fio, Schema: s, BucketDir: func([]byte, int32) (string, error) { return dir, nil },
		DeletionVectors: map[BucketKey]map[string]*roaring.Bitmap{{Partition: string(EmptyBinaryRow())}: {"old.parquet": masked}}}
	for _, m := range []DataFileMeta{oldMeta, newMeta} {
		in.Files = append(in.Files, ManifestEntry{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: m})
	}
	v, err := NewView(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return writtenTable{view: v, model: model}
}

// oneFileTable is a table of one data file, whose candidate rows a prefix
// scan keeps as read, in file order.
func oneFileTable(t *testing.T) writtenTable {
	s := stateSchema()
	dir := t.TempDir()
	fio := NewLocalFileIO()
	rec := buildStateRecord(t, s, 2500)
	defer rec.Release()
	meta, err := WriteDataFile(fio, filepath.Join(dir, "only.parquet"), s, rec, seqRange(0, 2500), nil, DataFileOptions{Level: 1, PageRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	model := map[int]string{}
	for i, r := range rowStrings(rec) {
		model[i] = r
	}
	v, err := NewView(ViewInput{FIO: fio, Schema: s, BucketDir: func([]byte, int32) (string, error) { return dir, nil },
		Files: []ManifestEntry{{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: meta}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return writtenTable{view: v, model: model}
}

// ScanPrefixes returns what ScanPrefixRange returns for each prefix, in
// prefix order, with each row's prefix index.
func TestScanPrefixesMatchesPrefixRanges(t *testing.T) {
	tables := map[string]func(*testing.T) writtenTable{
		"dv":          func(t *testing.T) writtenTable { return newWrittenTable(t, true) },
		"merged":      func(t *testing.T) writtenTable { return newWrittenTable(t, false) },
		"interleaved": interleavedTable,
		"one file":    oneFileTable,
	}
	for name, mk := range tables {
		t.Run(name, func(t *testing.T) {
			w := mk(t)
			r := rand.New(rand.NewPCG(3, 4))
			for _, fields := range []int{1, 2, 3} {
				var prefixes [][]Datum
				// rows exist for i < 2500; prefixes past it are absent
				for i := 0; i < 2700; i += 1 + r.IntN(25*(4-fields)*(4-fields)) {
					p := []Datum{IntDatum(int64(i / 100)), BytesDatum(fmt.Appendf(nil, "k%03d", i%100/10)), IntDatum(int64(i % 10))}[:fields]
					if n := len(prefixes); n > 0 && CompareKeyDatums(w.view.keyTypes[:fields], prefixes[n-1], p) >= 0 {
						continue
					}
					prefixes = append(prefixes, p)
				}
				var want []string
				var wantOf []int32
				for i, p := range prefixes {
					var rows []string
					if fields < 3 {
						it, err := w.view.ScanPrefixRange(p, NullDatum, NullDatum)
						rows = drain(t, it, err)
					} else {
						it, err := w.view.ScanPrefixRange(p[:2], p[2], IntDatum(p[2].Int+1))
						rows = drain(t, it, err)
					}
					for _, row := range rows {
						want = append(want, row)
						wantOf = append(wantOf, int32(i))
					}
				}
				rec, of, err := w.view.ScanPrefixes(prefixes)
				if err != nil {
					t.Fatal(err)
				}
				got := rowStrings(rec)
				rec.Release()
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%d-field prefixes (%d): %d rows\n%s\nwant %d\n%s", fields, len(prefixes), len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
				}
				if fmt.Sprint(of) != fmt.Sprint(wantOf) {
					t.Fatalf("%d-field prefixes: prefix indexes %v, want %v", fields, of, wantOf)
				}
				if len(want) == 0 {
					t.Fatalf("%d-field prefixes matched nothing; the test checks nothing", fields)
				}
			}
		})
	}
}

// Unsorted, repeated or ragged prefixes are refused.
func TestScanPrefixesRejectsBadPrefixes(t *testing.T) {
	v := newWrittenTable(t, true).view
	for name, ps := range map[string][][]Datum{
		"unsorted": {{IntDatum(5)}, {IntDatum(4)}},
		"repeated": {{IntDatum(5)}, {IntDatum(5)}},
		"ragged":   {{IntDatum(4)}, {IntDatum(5), BytesDatum([]byte("k001"))}},
		"too long": {{IntDatum(4), BytesDatum([]byte("k")), IntDatum(1), IntDatum(2)}},
	} {
		if _, _, err := v.ScanPrefixes(ps); err == nil {
			t.Errorf("%s prefixes: no error", name)
		}
	}
}
