package table

import (
	"bytes"
	"strings"
	"testing"
)

// A data file written with a schema's cached layout and pooled scratch
// (after other files and after a write that failed) is byte-for-byte the
// file a first writer writes.
func TestDataFileWriterReuseWritesSameBytes(t *testing.T) {
	for _, codec := range []string{"none", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			s := benchSchema(true)
			small := benchRecord(s, benchRows(sortedBenchKeys(0, 3000, 1), 0))
			defer small.Release()
			other := benchRecord(s, benchRows(sortedBenchKeys(5000, 2500, 3), 1))
			defer other.Release()
			opts := DataFileOptions{Compression: codec, PageRows: 256}
			fio := newMemFS()
			write := func(name string) []byte {
				t.Helper()
				if _, err := WriteDataFile(fio, name, s, small, seqRange(0, 3000), nil, opts); err != nil {
					t.Fatal(err)
				}
				b, err := fio.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			first := write("first")
			if _, err := WriteDataFile(fio, "other", s, other, seqRange(7, 2500), nil, opts); err != nil {
				t.Fatal(err)
			}
			w, err := NewDataFileWriter(fio, "failed", s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(other, seqRange(0, 2500), nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(small, seqRange(0, 3000), nil); err == nil || !strings.Contains(err.Error(), "not strictly ascending") {
				t.Fatalf("write of keys below the previous batch's: %v", err)
			}
			w.Abort()
			if again := write("again"); !bytes.Equal(again, first) {
				t.Fatalf("second file of the same rows is %d bytes, the first %d", len(again), len(first))
			}
		})
	}
}

// A schema edited in place is laid out anew, not from the cache.
func TestDataFileKitFollowsSchemaEdits(t *testing.T) {
	s := benchSchema(true)
	k1, err := kitFor(s, DataFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := kitFor(s, DataFileOptions{}); k2 != k1 {
		t.Fatal("the same schema got a new kit")
	}
	s.Fields = append(s.Fields, Field{ID: 5, Name: "extra", Type: Int()})
	s.HighestFieldID = 5
	k3, err := kitFor(s, DataFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if k3 == k1 || len(k3.layout.parquet.Columns()) != 2+2+6 {
		t.Fatalf("edited schema: kit reused %v, %d columns", k3 == k1, len(k3.layout.parquet.Columns()))
	}
}
