package table

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// The data files the writer makes, and what their meta records, are pinned
// by digest: a change of the writer's work must not change a byte. The
// inputs cover every column type, nulls, retractions, NaN and infinities,
// pages cut at other row counts, files of several Writes and row groups,
// and a compaction's rewrite. Compressed files are pinned for snappy only:
// the framing of zstd pages is tuned on its own (DefaultZstdFrameBytes,
// DefaultZstdFrameRows), and a new framing changes their bytes.
//
// LAKESTATE_GOLDEN_PRINT=1 prints the digests instead of checking them.

var goldenDataFiles = map[string]string{
	"none/bench":                   "0fec3ac12e66154133e28eac",
	"none/bench-writes":            "02f304e1a6df9ccfda67ca8e",
	"none/compact-0":               "4586bc540d15e224d78768cc",
	"none/compact-1":               "5c1afc1c44f9bf74c74130c7",
	"none/compact-10":              "f867973643bfc8ae445ffd7c",
	"none/compact-11":              "6d69918ce20395f15c8a7615",
	"none/compact-12":              "39b9c4771b508b38c9f00981",
	"none/compact-13":              "7d66cfe9c792dd055455fc67",
	"none/compact-2":               "6d24c6ac460eeba510aafffa",
	"none/compact-3":               "0c63be7de6459538cfd82a5b",
	"none/compact-4":               "21c8c9ee2468fdc338b11b41",
	"none/compact-5":               "94e86cfff76a2d1f0050f0b3",
	"none/compact-6":               "b9526fd9619048b351b84bc5",
	"none/compact-7":               "a5454d2b71b4d31b69665977",
	"none/compact-8":               "82a28092d9de396579d408c3",
	"none/compact-9":               "ab5caaf35445556b764adce7",
	"none/state":                   "7659858b2b27215417476d19",
	"none/state-pages300":          "68f841602a787c93d23d723e",
	"none/state-pages300-writes":   "8c062b799f3700fec17f9bdb",
	"none/state-writes":            "6aff63e12d8bf5bce04b5fe7",
	"none/wide":                    "0cf5b076088668b75138d29c",
	"none/wide-sliced":             "d0a4472b492217a27205e231",
	"none/wide-sliced-writes":      "a812b3cc784a1caf1cc7c38f",
	"none/wide-writes":             "e2cec0e528bab28af1d30d79",
	"snappy/bench":                 "afa2a4218bc3185048c4b467",
	"snappy/bench-writes":          "16ce7dcd1bc1e563aa904d68",
	"snappy/compact-0":             "9b9c0b3e867d169248e55da8",
	"snappy/compact-1":             "4748a12e80a43edcf5c142c9",
	"snappy/compact-2":             "eb13dbfc05c37bebbd520c1a",
	"snappy/compact-3":             "76e8f2ebac8c648c13e13183",
	"snappy/compact-4":             "cf6d4208f9db09c37818051b",
	"snappy/compact-5":             "b5556a8c15c7344dfd1fcebf",
	"snappy/state":                 "6fefc59f837a39db487a9497",
	"snappy/state-pages300":        "586ca4f49e06053ef6d234a6",
	"snappy/state-pages300-writes": "212974043b8c8ce3e7fcda08",
	"snappy/state-writes":          "3120e1c77565ce9d6838a102",
	"snappy/wide":                  "efc2fd2c99b75bcf0cb3def7",
	"snappy/wide-sliced":           "c20880c48f670e2b9d9ccb98",
	"snappy/wide-sliced-writes":    "19527743711980c8c3464608",
	"snappy/wide-writes":           "c33fa3e420f3e225d7327171",
}

func TestDataFileBytesAreUnchanged(t *testing.T) {
	got := map[string]string{}
	for _, codec := range []string{"none", "snappy"} {
		for name, digest := range goldenDataFileDigests(t, codec) {
			got[codec+"/"+name] = digest
		}
	}
	if os.Getenv("LAKESTATE_GOLDEN_PRINT") != "" {
		for _, k := range slices.Sorted(maps.Keys(got)) {
			fmt.Printf("\t%q: %q,\n", k, got[k])
		}
		return
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		want, ok := goldenDataFiles[k]
		if !ok {
			t.Errorf("%s: no golden digest (got %s)", k, got[k])
			continue
		}
		if got[k] != want {
			t.Errorf("%s: digest %s, want %s", k, got[k], want)
		}
	}
	if len(got) != len(goldenDataFiles) {
		t.Errorf("%d cases, %d golden digests", len(got), len(goldenDataFiles))
	}
}

// goldenDataFileDigests writes the golden cases with codec and returns a
// digest of each file's bytes and meta.
func goldenDataFileDigests(t *testing.T, codec string) map[string]string {
	t.Helper()
	out := map[string]string{}
	digest := func(name string, fio *memFS, p string, m DataFileMeta) {
		data, err := fio.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		h.Write(data)
		fmt.Fprintf(h, "|%v|%v", *m.DeleteRowCount, *m.FileSource)
		for _, c := range append(m.KeyStats.NullCounts, m.ValueStats.NullCounts...) {
			fmt.Fprintf(h, "|%v", *c)
		}
		// The rest of the meta, without the pointers %+v would print.
		m.FileName, m.CreationTimeMs, m.DeleteRowCount, m.FileSource = "", nil, nil, nil
		m.KeyStats.NullCounts, m.ValueStats.NullCounts = nil, nil
		fmt.Fprintf(h, "|%+v", m)
		out[name] = hex.EncodeToString(h.Sum(nil))[:24]
	}
	opts := DataFileOptions{Compression: codec}

	state := buildStateRecord(t, stateSchema(), 2500)
	defer state.Release()
	kinds := make([]ValueKind, 2500)
	for i := range kinds {
		kinds[i] = ValueKind(i % 7 % 4)
	}
	wide := goldenWideRecord(t)
	defer wide.Release()
	sliced := wide.NewSlice(5, 2995)
	defer sliced.Release()
	bench := benchRecord(benchSchema(true), benchRows(sortedBenchKeys(0, 3000, 1), 0))
	defer bench.Release()

	for _, c := range []struct {
		name  string
		s     *Schema
		rec   arrow.Record
		kinds []ValueKind
		opts  DataFileOptions
	}{
		{"state", stateSchema(), state, kinds, opts},
		{"state-pages300", stateSchema(), state, nil, DataFileOptions{Compression: codec, PageRows: 300}},
		{"wide", goldenWideSchema(), wide, nil, opts},
		{"wide-sliced", goldenWideSchema(), sliced, nil, opts},
		{"bench", benchSchema(true), bench, nil, opts},
	} {
		fio := newMemFS()
		n := int(c.rec.NumRows())
		m, err := WriteDataFile(fio, "f", c.s, c.rec, seqRange(100, n), c.kinds, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		digest(c.name, fio, "f", m)

		// The same rows in Writes of 700, row groups ended past 64 KiB.
		w, err := NewDataFileWriter(fio, "g", c.s, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < n; lo += 700 {
			hi := min(n, lo+700)
			part := c.rec.NewSlice(int64(lo), int64(hi))
			var ks []ValueKind
			if c.kinds != nil {
				ks = c.kinds[lo:hi]
			}
			err := w.Write(part, seqRange(100+int64(lo), hi-lo), ks)
			part.Release()
			if err == nil {
				err = w.endRowGroupPast(64 << 10)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		m, err = w.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if data, _ := fio.ReadFile("g"); codec == "none" {
			f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.RowGroups()) < 2 {
				t.Fatalf("%s: %d row groups, want several", c.name, len(f.RowGroups()))
			}
		}
		digest(c.name+"-writes", fio, "g", m)
	}

	// A compaction merging two interleaved runs, with a small target so it
	// rolls over several files.
	fio := newMemFS()
	s := kvSchema()
	s.Options[OptionFileCompression] = codec
	n := 0
	files, err := NewDataBucketFiles(fio, "bucket-0", s, BucketFilesOptions{
		TargetFileSize: 96 << 10, NewFileName: func() string { n++; return fmt.Sprintf("out-%d.parquet", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	even := writeKVRange(t, files, "even.parquet", 4, 0, 2, 20_000, 0)
	odd := writeKVRange(t, files, "odd.parquet", 5, 1, 2, 20_000, 20_000)
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	l, err := NewLevels(cmp, []DataFileMeta{even, odd}, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(cmp, CompactUnit{OutputLevel: 5, Files: l.AllFiles()}, l, CompactionOptions{SmallFileSize: 1 << 40, DeletionVectors: true})
	res, err := Compact(plan, l, DeletionVectors{}, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) < 2 {
		t.Fatalf("compaction wrote %d files, want several", len(res.Added))
	}
	for i, f := range res.Added {
		digest(fmt.Sprintf("compact-%d", i), fio, path.Join("bucket-0", f.FileName), f)
	}
	return out
}

// goldenWideSchema has a nullable column of every type the writer converts
// on its own path (ints of each width, floats, strings, bytes).
func goldenWideSchema() *Schema {
	return &Schema{
		Fields: []Field{
			{ID: 0, Name: "k", Type: BigInt().NotNull()},
			{ID: 1, Name: "t", Type: TinyInt()},
			{ID: 2, Name: "i", Type: Int()},
			{ID: 3, Name: "l", Type: BigInt()},
			{ID: 4, Name: "f", Type: Float()},
			{ID: 5, Name: "d", Type: Double()},
			{ID: 6, Name: "s", Type: String()},
			{ID: 7, Name: "b", Type: Bytes()},
			{ID: 8, Name: "nn", Type: Int().NotNull()},
			{ID: 9, Name: "dn", Type: Double().NotNull()},
			{ID: 10, Name: "sn", Type: String().NotNull()},
			{ID: 11, Name: "ts3", Type: Timestamp(3)},
			{ID: 12, Name: "ts6", Type: Timestamp(6).NotNull()},
			{ID: 13, Name: "fn", Type: Float().NotNull()},
			{ID: 14, Name: "bn", Type: Bytes().NotNull()},
			{ID: 15, Name: "dt", Type: Date().NotNull()},
		},
		HighestFieldID: 15,
		PrimaryKeys:    []string{"k"},
		Options:        map[string]string{"bucket": "1"},
	}
}

func goldenWideRecord(t *testing.T) arrow.Record {
	t.Helper()
	sch, err := goldenWideSchema().ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.MaxFloat64, -math.SmallestNonzeroFloat64}
	for i := range 3000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i)*1_000_003 - 1_500_000_000)
		b.Field(8).(*array.Int32Builder).Append(int32(i*7919) ^ math.MinInt32)
		d := float64(i) / 7
		if i%11 == 0 {
			d = special[i/11%len(special)]
		}
		b.Field(9).(*array.Float64Builder).Append(d)
		b.Field(10).(*array.StringBuilder).Append(strings.Repeat("é", i%9) + fmt.Sprint(i%13))
		b.Field(12).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i%977)*-1_000_003 + 1_234_567))
		b.Field(13).(*array.Float32Builder).Append(float32(d) * -3)
		b.Field(14).(*array.BinaryBuilder).Append([]byte{byte(i >> 3), 1, byte(i)}[:i%3])
		b.Field(15).(*array.Date32Builder).Append(arrow.Date32(i*37 - 40_000))
		if i%5 == 0 {
			for c := 1; c < 8; c++ {
				b.Field(c).AppendNull()
			}
			b.Field(11).AppendNull()
			continue
		}
		b.Field(11).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i%1013)*-86_400_007 + 5))
		b.Field(1).(*array.Int8Builder).Append(int8(i))
		b.Field(2).(*array.Int32Builder).Append(int32(-i) * 3)
		l := int64(i) << 40
		if i == 1234 {
			l = math.MinInt64
		}
		b.Field(3).(*array.Int64Builder).Append(l)
		b.Field(4).(*array.Float32Builder).Append(float32(d))
		b.Field(5).(*array.Float64Builder).Append(-d)
		b.Field(6).(*array.StringBuilder).Append(strings.Repeat("sx", i%23))
		b.Field(7).(*array.BinaryBuilder).Append([]byte{byte(i), 0, byte(i >> 8)}[:i%4])
	}
	return b.NewRecordBatch()
}
