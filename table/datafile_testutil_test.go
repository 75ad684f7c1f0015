package table

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// fixturePKSchema is schema-0 of the pk-dv-parquet and pk-mor-parquet tables.
func fixturePKSchema(dv bool) *Schema {
	s := &Schema{
		Fields: []Field{
			{ID: 0, Name: "f0", Type: String().NotNull()},
			{ID: 1, Name: "f1", Type: Int().NotNull()},
			{ID: 2, Name: "f2", Type: Int().NotNull()},
			{ID: 3, Name: "f3", Type: Double()},
		},
		HighestFieldID: 3,
		PartitionKeys:  []string{"f1"},
		PrimaryKeys:    []string{"f0", "f1", "f2"},
		Options:        map[string]string{"bucket": "2", "bucket-key": "f2", "file.format": "parquet"},
	}
	if dv {
		s.Options[OptionDeletionVectors] = "true"
	}
	return s
}

// localBenchFile writes n uncompressed bench rows to a data file of the
// local file system and opens it; the file closes when the test ends.
func localBenchFile(t *testing.T, n int64) (*DataFile, string, []benchRow) {
	t.Helper()
	s := benchSchema(true)
	s.Options[OptionFileCompression] = "none"
	rows := benchRows(sortedBenchKeys(0, n, 1), 0)
	rec := benchRecord(s, rows)
	defer rec.Release()
	seqs := make([]int64, len(rows))
	for i := range seqs {
		seqs[i] = int64(i)
	}
	d, p := localDataFile(t, s, rec, seqs)
	return d, p, rows
}

// localDataFile writes rec to a data file of the local file system and
// opens it; the file closes when the test ends.
func localDataFile(t *testing.T, s *Schema, rec arrow.Record, seqs []int64) (*DataFile, string) {
	t.Helper()
	return localDataFileWith(t, s, rec, seqs, DataFileOptions{})
}

// localDataFileWith is localDataFile writing with opts.
func localDataFileWith(t *testing.T, s *Schema, rec arrow.Record, seqs []int64, opts DataFileOptions) (*DataFile, string) {
	t.Helper()
	fio := NewLocalFileIO()
	p := filepath.Join(t.TempDir(), "data-0.parquet")
	if _, err := WriteDataFile(fio, p, s, rec, seqs, nil, opts); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDataFile(fio, p, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, p
}
