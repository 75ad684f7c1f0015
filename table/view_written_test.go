package table

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writtenTable is a one-bucket state table written by this package: an old
// run (rows 0..2499), and a newer run that updates key groups 3 and 10 and
// deletes ts=0 of key group 4. With deletion vectors the newer run sits at
// level 1 and the old run's superseded rows are masked; without, it sits at
// level 0 holding +U and -D rows and reads merge.
type writtenTable struct {
	view  *View
	model map[int]string // row i -> expected row string, absent when deleted
}

func newWrittenTable(t *testing.T, dv bool) writtenTable {
	s := stateSchema()
	if dv {
		s.Options[OptionDeletionVectors] = "true"
	}
	dir := t.TempDir()
	fio := NewLocalFileIO()
	old := buildStateRecord(t, s, 2500)
	defer old.Release()
	oldMeta, err := WriteDataFile(fio, filepath.Join(dir, "old.parquet"), s, old, seqRange(0, 2500), nil, DataFileOptions{Level: 2, PageRows: 128})
	if err != nil {
		t.Fatal(err)
	}
	model := map[int]string{}
	for i, r := range rowStrings(old) {
		model[i] = r
	}
	var upd []int
	var kinds []ValueKind
	masked := roaring.New()
	for i := 0; i < 2500; i++ {
		switch {
		case i/100 == 3 || i/100 == 10:
			upd = append(upd, i)
			kinds = append(kinds, KindUpdateAfter)
			masked.Add(uint32(i))
		case i/100 == 4 && i%10 == 0:
			masked.Add(uint32(i))
			delete(model, i)
			if !dv {
				upd = append(upd, i)
				kinds = append(kinds, KindDelete)
			}
		}
	}
	newer := buildStateRows(t, s, upd, 7777)
	defer newer.Release()
	for j, r := range rowStrings(newer) {
		if kinds[j] != KindDelete {
			model[upd[j]] = r
		}
	}
	level := int32(0)
	if dv {
		level = 1
	}
	newMeta, err := WriteDataFile(fio, filepath.Join(dir, "new.parquet"), s, newer, seqRange(10000, len(upd)), kinds, DataFileOptions{Level: level, PageRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	in := ViewInput{FIO: fio, Schema: s, BucketDir: func([]byte, int32) (string, error) { return dir, nil }}
	for _, m := range []DataFileMeta{oldMeta, newMeta} {
		in.Files = append(in.Files, ManifestEntry{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: m})
	}
	if dv {
		in.DeletionVectors = map[BucketKey]map[string]*roaring.Bitmap{
			{Partition: string(EmptyBinaryRow())}: {"old.parquet": masked},
		}
	}
	v, err := NewView(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return writtenTable{view: v, model: model}
}

func (w writtenTable) want(pred func(i int) bool) []string {
	var is []int
	for i := range w.model {
		if pred(i) {
			is = append(is, i)
		}
	}
	slices.Sort(is)
	out := make([]string, len(is))
	for j, i := range is {
		out[j] = w.model[i]
	}
	return out
}

func stateKeys(t *testing.T, is []int) arrow.Record {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "kg", Type: arrow.PrimitiveTypes.Int32}, {Name: "key", Type: arrow.BinaryTypes.String}, {Name: "ts", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for _, i := range is {
		b.Field(0).(*array.Int32Builder).Append(int32(i / 100))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("k%03d", i%100/10))
		b.Field(2).(*array.Int64Builder).Append(int64(i % 10))
	}
	return b.NewRecordBatch()
}

func TestWrittenTableReads(t *testing.T) {
	for _, dv := range []bool{true, false} {
		t.Run(fmt.Sprintf("dv=%v", dv), func(t *testing.T) {
			w := newWrittenTable(t, dv)
			v := w.view
			it, err := v.ScanAll()
			if got, want := sortedJoin(drain(t, it, err)), sortedJoin(w.want(func(int) bool { return true })); got != want {
				t.Fatalf("scan all: %d rows, want %d", strings.Count(got, "\n")+1, strings.Count(want, "\n")+1)
			}
			it, err = v.ScanKeyGroupRange(3, 4)
			if got, want := sortedJoin(drain(t, it, err)), sortedJoin(w.want(func(i int) bool { return i/100 == 3 || i/100 == 4 })); got != want {
				t.Fatalf("key groups 3..4:\n%s\nwant\n%s", got, want)
			}
			// ordered: [kg=4, key=k002], ts in [0, 7)
			it, err = v.ScanPrefixRange([]Datum{IntDatum(4), BytesDatum([]byte("k002"))}, IntDatum(0), IntDatum(7))
			if got, want := strings.Join(drain(t, it, err), "\n"), strings.Join(w.want(func(i int) bool { return i/100 == 4 && i%100/10 == 2 && i%10 < 7 }), "\n"); got != want {
				t.Fatalf("prefix range:\n%s\nwant\n%s", got, want)
			}
			it, err = v.ScanPrefixRange([]Datum{IntDatum(10)}, NullDatum, NullDatum)
			if got, want := strings.Join(drain(t, it, err), "\n"), strings.Join(w.want(func(i int) bool { return i/100 == 10 }), "\n"); got != want {
				t.Fatalf("open prefix range:\n%s\nwant\n%s", got, want)
			}
			r := rand.New(rand.NewPCG(7, 9))
			var is []int
			for i := 0; i < 3000; i += 1 + r.IntN(9) {
				is = append(is, i) // keys >= 2500 are absent
			}
			keys := stateKeys(t, is)
			defer keys.Release()
			rec, ids, err := v.ProbeIndexed(keys)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			var want []string
			var wantIDs []int32
			for j, i := range is {
				if row, ok := w.model[i]; ok {
					want = append(want, row)
					wantIDs = append(wantIDs, int32(j))
				}
			}
			if got := rowStrings(rec); strings.Join(got, "\n") != strings.Join(want, "\n") || fmt.Sprint(ids) != fmt.Sprint(wantIDs) {
				t.Fatalf("probe: %d rows, want %d", len(got), len(want))
			}
		})
	}
}
