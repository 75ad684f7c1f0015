package table

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fixtureFile is a live file of a fixture table as its FIXTURE.md lists it.
type fixtureFile struct {
	part  int64
	name  string
	level int32
}

// hivePartitionDir renders a single INT partition field's directory.
func hivePartitionDir(root string, s *Schema) func([]byte, int32) (string, error) {
	return func(part []byte, bucket int32) (string, error) {
		_, types, err := fieldsOf(s, s.PartitionKeys)
		if err != nil {
			return "", err
		}
		ds, err := DecodeBinaryRow(part, types)
		if err != nil {
			return "", err
		}
		dir := root
		for i, k := range s.PartitionKeys {
			dir = filepath.Join(dir, fmt.Sprintf("%s=%d", k, ds[i].Int))
		}
		return filepath.Join(dir, fmt.Sprintf("bucket-%d", bucket)), nil
	}
}

// entriesFromFiles builds the manifest entries of data files from their
// content (key range, sequence range, retraction count), as a manifest would
// record them.
func entriesFromFiles(t *testing.T, root string, s *Schema, files []fixtureFile) []ManifestEntry {
	t.Helper()
	_, keyTypes, _ := fieldsOf(s, s.TrimmedPrimaryKeys())
	keyIdx, _, _ := fieldsOf(s, s.TrimmedPrimaryKeys())
	var out []ManifestEntry
	for _, f := range files {
		part := EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(f.part)})
		bucket := int32(0)
		if strings.Contains(f.name, "/") {
			fmt.Sscanf(f.name[:strings.IndexByte(f.name, '/')], "bucket-%d", &bucket)
			f.name = f.name[strings.IndexByte(f.name, '/')+1:]
		}
		dir, _ := hivePartitionDir(root, s)(part, bucket)
		d, err := OpenDataFile(NewLocalFileIO(), filepath.Join(dir, f.name), s)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := d.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		keyRow := func(i int) []byte {
			ds := make([]Datum, len(keyIdx))
			for k, fi := range keyIdx {
				ds[k], _ = DatumOf(fr.Rows.Column(fi), i, keyTypes[k])
			}
			return EncodeBinaryRow(keyTypes, ds)
		}
		var dels int64
		for _, k := range fr.Kinds {
			if k.IsRetract() {
				dels++
			}
		}
		n := int(fr.Rows.NumRows())
		out = append(out, ManifestEntry{Kind: FileAdd, Partition: part, Bucket: bucket, TotalBuckets: 2, File: DataFileMeta{
			FileName: f.name, RowCount: int64(n), MinKey: keyRow(0), MaxKey: keyRow(n - 1), Level: f.level,
			MinSequenceNumber: slices.Min(fr.Seqs), MaxSequenceNumber: slices.Max(fr.Seqs), DeleteRowCount: &dels,
		}})
		fr.Release()
		d.Close()
	}
	return out
}

func pkDVView(t *testing.T) *View {
	root := fixtureDir(t, "pk-dv-parquet")
	s := fixturePKSchema(true)
	files := []fixtureFile{
		{10, "bucket-0/data-f19db350-7c55-4686-8839-78d15aa17fc1-0.parquet", 5},
		{10, "bucket-0/data-f19db350-7c55-4686-8839-78d15aa17fc1-1.parquet", 4},
		{10, "bucket-1/data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet", 5},
		{10, "bucket-1/data-e9932532-7b58-48a2-8952-368ec6dec536-0.parquet", 0},
		{10, "bucket-1/data-c5916932-cdff-44eb-93af-32613a1c7004-0.parquet", 0},
		{20, "bucket-0/data-6922349a-83a3-4da3-995b-5a9e5b066710-0.parquet", 5},
	}
	p10 := string(EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(10)}))
	dvs := map[BucketKey]map[string]*roaring.Bitmap{}
	for b, name := range map[int32]string{0: "data-f19db350-7c55-4686-8839-78d15aa17fc1-0.parquet", 1: "data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet"} {
		file := filepath.Join(root, "index", fmt.Sprintf("index-16bec1d6-fa31-49bd-a240-deadcfff6003-%d", b))
		data, err := NewLocalFileIO().ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeDVIndex(file, data, []DeletionVectorRange{{DataFile: name, Offset: 1, Length: 22}})
		if err != nil {
			t.Fatal(err)
		}
		dvs[BucketKey{Partition: p10, Bucket: b}] = m
	}
	v, err := NewView(ViewInput{FIO: NewLocalFileIO(), Schema: s, Files: entriesFromFiles(t, root, s, files),
		BucketDir: hivePartitionDir(root, s), DeletionVectors: dvs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func pkMORView(t *testing.T) *View {
	root := fixtureDir(t, "pk-mor-parquet")
	s := fixturePKSchema(false)
	files := []fixtureFile{
		{10, "bucket-0/data-cf759363-12eb-4f9f-9549-965e455e8084-0.parquet", 5},
		{10, "bucket-1/data-3a6000ce-0611-462e-8a99-f3cb28aa6f08-0.parquet", 0},
		{10, "bucket-1/data-3a6000ce-0611-462e-8a99-f3cb28aa6f08-1.parquet", 0},
		{10, "bucket-1/data-a6394463-418c-423d-b9e2-f77e8a065f39-0.parquet", 0},
		{10, "bucket-1/data-7c8140d1-a34f-4634-9814-beb4ff65ebce-0.parquet", 0},
		{20, "bucket-0/data-7c66dfe2-bec3-4fc2-a952-2d17d6ae91bb-0.parquet", 5},
	}
	v, err := NewView(ViewInput{FIO: NewLocalFileIO(), Schema: s, Files: entriesFromFiles(t, root, s, files), BucketDir: hivePartitionDir(root, s)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

const twoRoads = "Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference."

// fixtureKeys builds a probe record of (f0, f1, f2) keys.
func fixtureKeys(t *testing.T, v *View, keys ...string) arrow.Record {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "f0", Type: arrow.BinaryTypes.String}, {Name: "f1", Type: arrow.PrimitiveTypes.Int32}, {Name: "f2", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for _, k := range keys {
		var name string
		var f1, f2 int32
		i := strings.LastIndexByte(k, '/')
		fmt.Sscanf(k[i+1:], "%d,%d", &f1, &f2)
		name = k[:i]
		b.Field(0).(*array.StringBuilder).Append(name)
		b.Field(1).(*array.Int32Builder).Append(f1)
		b.Field(2).(*array.Int32Builder).Append(f2)
	}
	return b.NewRecordBatch()
}

func TestProbePKDVFixture(t *testing.T) {
	v := pkDVView(t)
	keys := fixtureKeys(t, v, "Alice/10,1", "Tony/10,0", "Alex/10,0", "Skye/10,0", "Lucy/20,1", "Nobody/20,1", twoRoads+"/10,1", "Emily/10,0")
	defer keys.Release()
	rec, ids, err := v.ProbeIndexed(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	got := strings.Join(rowStrings(rec), ";")
	want := "Alice|10|1|19.1;Alex|10|0|16.1;Lucy|20|1|14.1;" + twoRoads + "|10|1|11;Emily|10|0|13.1"
	if got != want || fmt.Sprint(ids) != "[0 2 4 6 7]" {
		t.Fatalf("probe:\n got %s %v\nwant %s", got, ids, want)
	}
}

func TestProbePKMORFixture(t *testing.T) {
	v := pkMORView(t)
	keys := fixtureKeys(t, v, "Alice/10,1", "Tony/10,0", "Alex/10,0", "Marco/10,0", "Skye2/10,0", "Paul/20,1", "Bob/10,1")
	defer keys.Release()
	rec, ids, err := v.ProbeIndexed(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	got := strings.Join(rowStrings(rec), ";")
	want := "Alice|10|1|19.1;Marco|10|0|21.1;Skye2|10|0|31;Paul|20|1|18.1"
	if got != want || fmt.Sprint(ids) != "[0 3 4 5]" {
		t.Fatalf("probe:\n got %s %v\nwant %s", got, ids, want)
	}
}
