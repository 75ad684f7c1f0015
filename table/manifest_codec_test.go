package table

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func metaUnhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func metaI64(v int64) *int64 { return &v }
func metaI32(v int32) *int32 { return &v }

// avroHeaderSchema returns the writer schema text in a container header.
func avroHeaderSchema(t testing.TB, file string, data []byte) string {
	t.Helper()
	r := &avroFrame{file: file, data: data, pos: len(avroMagic)}
	meta, err := r.metadata()
	if err != nil {
		t.Fatal(err)
	}
	return string(meta["avro.schema"])
}

// Our writer schemas are the exact text Java Paimon 1.3 puts in its files:
// same field names, order, unions and defaults.
func TestAvroWriterSchemasMatchJava(t *testing.T) {
	dir := fixtureDir(t, "pk-dv-parquet")
	for _, tc := range []struct {
		prefix string
		ours   avroWriterSchema
	}{
		{"manifest-list-", avroManifestListSchema},
		{"manifest-", avroManifestEntrySchema},
		{"index-manifest-", avroIndexManifestSchema},
	} {
		names, _ := filepath.Glob(filepath.Join(dir, "manifest", tc.prefix+"*"))
		checked := 0
		for _, name := range names {
			if tc.prefix == "manifest-" && strings.HasPrefix(filepath.Base(name), "manifest-list-") {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := avroHeaderSchema(t, name, data); got != tc.ours.text {
				t.Errorf("%s: Java schema\n%s\nours\n%s", name, got, tc.ours.text)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("no %s files", tc.prefix)
		}
	}
	// What we write carries the same header schema.
	data, err := encodeManifest(nil, avroCodecZstandard, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if avroHeaderSchema(t, "ours", data) != avroManifestEntrySchema.text {
		t.Fatal("written header schema differs")
	}
}

// The paimon-rust vectors: snappy, nullable top level and nested records, an
// older field set.
func TestManifestRustVectors(t *testing.T) {
	rel := "manifest/manifest-list-5c7399a0-46ae-4a5e-9c13-3ab07212cdb6-0"
	list, err := DecodeManifestList(rel, readFixture(t, "rust-spec-vectors", rel))
	if err != nil {
		t.Fatal(err)
	}
	stats := SimpleStats{
		MinValues:  metaUnhex(t, "00000002 0000000000000000 0100000000000000 3100000000000081"),
		MaxValues:  metaUnhex(t, "00000002 0000000000000000 0100000000000000 3100000000000081"),
		NullCounts: []*int64{metaI64(1), metaI64(2)},
	}
	want := []ManifestFileMeta{
		{FileName: "manifest-19d138df-233f-46f7-beb6-fadaf4741c0e", FileSize: 10, NumAddedFiles: 10, NumDeletedFile: 10, PartitionStats: stats, SchemaID: 1},
		{FileName: "manifest-a703ee48-c411-413e-b84e-c03bdb179631", FileSize: 11, NumAddedFiles: 0, NumDeletedFile: 10, PartitionStats: stats, SchemaID: 2},
	}
	if !reflect.DeepEqual(list, want) {
		t.Fatalf("manifest list\n%+v\nwant\n%+v", list, want)
	}

	rel = "manifest/manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0"
	entries, err := DecodeManifest(rel, readFixture(t, "rust-spec-vectors", rel))
	if err != nil {
		t.Fatal(err)
	}
	key := metaUnhex(t, "00000001 0000000000000000 0100000000000000")
	kstats := SimpleStats{
		MinValues:  metaUnhex(t, "00000002 0000000000000000 3100000000000081 0100000000000000"),
		MaxValues:  metaUnhex(t, "00000002 0000000000000000 3100000000000081 0100000000000000"),
		NullCounts: []*int64{metaI64(1), metaI64(2)},
	}
	created := time.Date(2024, 9, 6, 7, 45, 55, 39e6, time.UTC).UnixMilli()
	file := func(name string, deletes int64) DataFileMeta {
		return DataFileMeta{FileName: name, FileSize: 10, RowCount: 100, MinKey: key, MaxKey: key, KeyStats: kstats, ValueStats: kstats,
			MinSequenceNumber: 1, MaxSequenceNumber: 100, SchemaID: 0, Level: 1, ExtraFiles: []string{}, CreationTimeMs: &created, DeleteRowCount: &deletes}
	}
	wantEntries := []ManifestEntry{
		{Kind: FileDelete, Partition: key, Bucket: 1, TotalBuckets: 10, File: file("f1.parquet", 0)},
		{Kind: FileAdd, Partition: key, Bucket: 2, TotalBuckets: 10, File: file("f2.parquet", 1)},
	}
	if !reflect.DeepEqual(entries, wantEntries) {
		t.Fatalf("manifest\n%+v\nwant\n%+v", entries, wantEntries)
	}
}

func sampleEntries() []ManifestEntry {
	src := SourceCompact
	ext := "/elsewhere/data-1.parquet"
	return []ManifestEntry{
		{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 3, TotalBuckets: 4, File: DataFileMeta{
			FileName: "data-a-0.parquet", FileSize: 4096, RowCount: 10,
			MinKey: []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, MaxKey: []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0},
			KeyStats:          SimpleStats{MinValues: []byte{1}, MaxValues: []byte{2}, NullCounts: []*int64{metaI64(0)}},
			ValueStats:        SimpleStats{MinValues: []byte{3}, MaxValues: []byte{4}, NullCounts: []*int64{metaI64(0), nil}},
			MinSequenceNumber: 5, MaxSequenceNumber: 14, SchemaID: 0, Level: 0, ExtraFiles: []string{},
			CreationTimeMs: metaI64(1700000000123), DeleteRowCount: metaI64(2), FileSource: &src,
		}},
		{Kind: FileDelete, Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 4, File: DataFileMeta{
			FileName: "data-b-1.parquet", FileSize: 1, RowCount: 1, MinKey: []byte{}, MaxKey: []byte{},
			KeyStats:   SimpleStats{MinValues: []byte{}, MaxValues: []byte{}, NullCounts: []*int64{}},
			ValueStats: SimpleStats{MinValues: []byte{}, MaxValues: []byte{}, NullCounts: []*int64{}},
			Level:      5, ExtraFiles: []string{"data-b-1.parquet.index"}, EmbeddedIndex: []byte{7, 7},
			HasValueStatsCols: true, ValueStatsCols: []string{"v"}, ExternalPath: &ext, FirstRowID: metaI64(100),
		}},
	}
}

func TestManifestRoundTripAllCodecs(t *testing.T) {
	entries := sampleEntries()
	for _, codec := range []string{avroCodecZstandard, avroCodecNull, avroCodecSnappy, avroCodecDeflate} {
		data, err := encodeManifest(entries, codec, [16]byte{9, 8, 7})
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeManifest("m", data)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if !reflect.DeepEqual(back, entries) {
			t.Fatalf("%s round trip\n%+v\nwant\n%+v", codec, back, entries)
		}
	}
	// Deterministic: the same input and sync marker give the same bytes.
	a, _ := encodeManifest(entries, avroCodecZstandard, [16]byte{1})
	b, _ := encodeManifest(entries, avroCodecZstandard, [16]byte{1})
	if !bytes.Equal(a, b) {
		t.Fatal("encoding is not deterministic")
	}
	// More records than one block holds.
	many := make([]ManifestEntry, 2*avroBlockRecords+5)
	for i := range many {
		many[i] = entries[i%2]
	}
	data, err := encodeManifest(many, avroCodecZstandard, [16]byte{2})
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeManifest("m", data); err != nil || len(back) != len(many) {
		t.Fatalf("multi-block: %d entries, %v", len(back), err)
	}
}

func TestManifestListAndIndexRoundTrip(t *testing.T) {
	metas := []ManifestFileMeta{
		{FileName: "manifest-a-0", FileSize: 100, NumAddedFiles: 3, NumDeletedFile: 1,
			PartitionStats: SimpleStats{MinValues: EmptyBinaryRow(), MaxValues: EmptyBinaryRow(), NullCounts: []*int64{}},
			SchemaID:       2, MinBucket: metaI32(0), MaxBucket: metaI32(3), MinLevel: metaI32(0), MaxLevel: metaI32(5)},
		{FileName: "manifest-a-1", FileSize: 7,
			PartitionStats: SimpleStats{MinValues: EmptyBinaryRow(), MaxValues: EmptyBinaryRow(), NullCounts: []*int64{}}},
	}
	data, err := encodeManifestList(metas, avroCodecZstandard, [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeManifestList("l", data)
	if err != nil || !reflect.DeepEqual(back, metas) {
		t.Fatalf("manifest list round trip %v\n%+v\n%+v", err, back, metas)
	}
	idx := []IndexManifestEntry{
		{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 1, IndexType: IndexTypeDeletionVectors, FileName: "index-a-0", FileSize: 63, RowCount: 2,
			DVRanges: []DeletionVectorRange{{DataFile: "data-x.parquet", Offset: 1, Length: 24, Cardinality: metaI64(2)}, {DataFile: "data-y.parquet", Offset: 33, Length: 22}}},
		{Kind: FileAdd, Partition: EmptyBinaryRow(), Bucket: 2, IndexType: "HASH", FileName: "index-a-1", FileSize: 8, RowCount: 2},
	}
	data, err = encodeIndexManifest(idx, avroCodecZstandard, [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	backIdx, err := DecodeIndexManifest("i", data)
	if err != nil || !reflect.DeepEqual(backIdx, idx) {
		t.Fatalf("index manifest round trip %v\n%+v\n%+v", err, backIdx, idx)
	}
}

// Every Java-written manifest file of the fixtures decodes, and re-encoding
// what we decoded gives the same records back.
func TestManifestJavaFilesReencode(t *testing.T) {
	for _, table := range []string{"pk-dv-parquet", "pk-mor-parquet", "append-parquet"} {
		names, _ := filepath.Glob(filepath.Join(fixtureDir(t, table), "manifest", "*"))
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(name)
			switch {
			case strings.HasPrefix(base, "manifest-list-"):
				recs, err := DecodeManifestList(base, data)
				if err != nil {
					t.Fatal(err)
				}
				enc, _ := encodeManifestList(recs, avroCodecZstandard, [16]byte{})
				if back, err := DecodeManifestList(base, enc); err != nil || !reflect.DeepEqual(back, recs) {
					t.Fatalf("%s: %v", name, err)
				}
			case strings.HasPrefix(base, "index-manifest-"):
				recs, err := DecodeIndexManifest(base, data)
				if err != nil {
					t.Fatal(err)
				}
				enc, _ := encodeIndexManifest(recs, avroCodecZstandard, [16]byte{})
				if back, err := DecodeIndexManifest(base, enc); err != nil || !reflect.DeepEqual(back, recs) {
					t.Fatalf("%s: %v", name, err)
				}
			default:
				recs, err := DecodeManifest(base, data)
				if err != nil {
					t.Fatal(err)
				}
				enc, _ := encodeManifest(recs, avroCodecZstandard, [16]byte{})
				if back, err := DecodeManifest(base, enc); err != nil || !reflect.DeepEqual(back, recs) {
					t.Fatalf("%s: %v\n%+v\n%+v", name, err, back, recs)
				}
			}
		}
	}
}

func TestManifestBadInput(t *testing.T) {
	const rel = "manifest/manifest-ba0138c4-ea53-45bb-9e8a-207e2b01fc8d-1"
	good := readFixture(t, "pk-dv-parquet", rel)
	flip := func(at int) []byte { b := append([]byte(nil), good...); b[at] ^= 0xff; return b }
	rec := toAvroManifestEntry(sampleEntries()[0])
	rec.Version = 1
	v1, err := encodeOCF(avroManifestEntrySchema, avroCodecNull, [16]byte{}, []avroManifestEntry{rec})
	if err != nil {
		t.Fatal(err)
	}
	rec.Version, rec.Kind = 2, 7
	kind, err := encodeOCF(avroManifestEntrySchema, avroCodecNull, [16]byte{}, []avroManifestEntry{rec})
	if err != nil {
		t.Fatal(err)
	}
	// A recursive writer schema (legal Avro, never Paimon) is refused before
	// any decoder is built for it.
	recursiveText := strings.Replace(avroManifestEntrySchema.text, `{"name":"_VERSION","type":"int"},`,
		`{"name":"_VERSION","type":"int"},{"name":"_LOOP","type":["null","org.apache.paimon.avro.generated.record"],"default":null},`, 1)
	recursive, err := encodeOCF(mustAvroSchema(recursiveText), avroCodecNull, [16]byte{}, []avroManifestEntry{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "bad magic"},
		{"recursive schema", recursive, "reference to the named type"},
		{"magic", flip(0), "bad magic"},
		{"truncated header", good[:30], "truncated"},
		{"truncated body", good[:len(good)-20], "truncated"},
		{"sync", flip(len(good) - 1), "sync marker"},
		{"block", flip(len(good) - 40), "block at offset"},
		{"version 1", v1, "_VERSION 1, want 2"},
		{"kind", kind, "_KIND 7"},
		{"list as manifest", readFixture(t, "pk-dv-parquet", "manifest/manifest-list-4b28f974-5a59-4b2e-9a6e-eb6a5477557f-7"), "record"},
	} {
		_, err := DecodeManifest(rel, tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), rel) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
}

func avroFuzzSeeds(f *testing.F, prefix string) {
	for _, table := range []string{"pk-dv-parquet", "append-parquet"} {
		names, _ := filepath.Glob(filepath.Join(fixtureDir(f, table), "manifest", prefix+"*"))
		for i, name := range names {
			if i >= 3 {
				break
			}
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

func checkFuzzError(t *testing.T, err error) {
	if err != nil && !strings.Contains(err.Error(), "avro-fuzz") {
		t.Fatalf("error does not name the file: %v", err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	avroFuzzSeeds(f, "manifest-")
	f.Add(readFixture(f, "rust-spec-vectors", "manifest/manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := DecodeManifest("avro-fuzz", data)
		checkFuzzError(t, err)
	})
}

func FuzzDecodeManifestList(f *testing.F) {
	avroFuzzSeeds(f, "manifest-list-")
	f.Add(readFixture(f, "rust-spec-vectors", "manifest/manifest-list-5c7399a0-46ae-4a5e-9c13-3ab07212cdb6-0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := DecodeManifestList("avro-fuzz", data)
		checkFuzzError(t, err)
	})
}

func FuzzDecodeIndexManifest(f *testing.F) {
	avroFuzzSeeds(f, "index-manifest-")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := DecodeIndexManifest("avro-fuzz", data)
		checkFuzzError(t, err)
	})
}
