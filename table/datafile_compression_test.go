package table

import (
	"maps"
	"path"
	"testing"

	"github.com/parquet-go/parquet-go/format"
)

// WriteAndCommit writes its data files with the table's file.compression.
func TestWriteAndCommitHonorsFileCompression(t *testing.T) {
	for codec, want := range map[string]format.CompressionCodec{"none": format.Uncompressed, "snappy": format.Snappy, "zstd": format.Zstd} {
		s := *benchSchema(true)
		s.Options = maps.Clone(s.Options)
		s.Options[OptionFileCompression] = codec
		fio := newMemFS()
		tbl, err := Create(fio, "t", s)
		if err != nil {
			t.Fatal(err)
		}
		rec := benchRecord(&s, benchRows(sortedBenchKeys(0, 3000, 1), 0))
		r, err := tbl.WriteAndCommit(rec, nil, CommitInfo{User: "u", Identifier: 1})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Added) == 0 {
			t.Fatalf("file.compression=%s: the commit added no file", codec)
		}
		for _, e := range r.Added {
			dir, _ := tbl.BucketDir(e.Partition, e.Bucket)
			d, err := OpenDataFile(fio, path.Join(dir, e.File.FileName), &s)
			if err != nil {
				t.Fatal(err)
			}
			for _, rg := range d.pf.Metadata().RowGroups {
				for c, col := range rg.Columns {
					if col.MetaData.Codec != want {
						t.Errorf("file.compression=%s: column %d written with %s", codec, c, col.MetaData.Codec)
					}
				}
			}
			d.Close()
		}
	}
}
