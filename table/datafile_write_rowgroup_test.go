package table

import (
	"path"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// A compaction's output files end a row group each time one buffers a
// quarter of a small target: the writer holds one group's pages, never a
// whole file, and the files read back whole, by row and by key.
func TestCompactionEndsRowGroups(t *testing.T) {
	const target = 64 << 10
	r := rewriteBigFile(t, target, 30000)
	b, l, rs, res := r.b, r.l, r.rs, r.res
	// A group ends after the batch that reached the limit: one batch of
	// bucketFilesMaxRun rows (about 40 bytes each here) may overshoot it.
	const groupLimit = target/4 + bucketFilesMaxRun*64
	groups := 0
	for _, f := range res.Added {
		d, err := OpenDataFile(b.fio, path.Join(b.dir, f.FileName), b.schema)
		if err != nil {
			t.Fatal(err)
		}
		for gi, g := range d.pf.Metadata().RowGroups {
			size := int64(0)
			for _, c := range g.Columns {
				size += c.MetaData.TotalCompressedSize
			}
			if size > groupLimit {
				t.Errorf("%s: row group %d holds %d bytes, over %d", f.FileName, gi, size, groupLimit)
			}
		}
		groups += len(d.groups)
		d.Close()
	}
	if groups < 2*len(res.Added) {
		t.Fatalf("%d row groups in %d files; want several per file", groups, len(res.Added))
	}
	if err := l.Apply(res.Deleted, res.Added); err != nil {
		t.Fatal(err)
	}
	if err := CheckBucket(l, res.DVs, b); err != nil {
		t.Fatal(err)
	}
	// The rows read back whole and in order, file by file.
	next := 0
	for _, f := range l.RunOfLevel(5).Files {
		d, err := OpenDataFile(b.fio, path.Join(b.dir, f.FileName), b.schema)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := d.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ks, vs := fr.Rows.Column(0).(*array.Int32), fr.Rows.Column(1).(*array.String)
		for i := range ks.Len() {
			if want := rs[next]; ks.Value(i) != want.k || vs.Value(i) != want.v || fr.Seqs[i] != want.seq {
				t.Fatalf("%s row %d: (%d, %q, seq %d), want (%d, %q, seq %d)", f.FileName, i, ks.Value(i), vs.Value(i), fr.Seqs[i], want.k, want.v, want.seq)
			}
			next++
		}
		fr.Release()
		d.Close()
	}
	if next != len(rs) {
		t.Fatalf("read %d rows back, wrote %d", next, len(rs))
	}
	// Every key is found at its row, across row group boundaries.
	at := int64(0)
	for _, f := range l.RunOfLevel(5).Files {
		keys := make([][]byte, f.RowCount)
		for i := range keys {
			keys[i] = AppendKeyDatums(nil, []DataType{Int().NotNull()}, []Datum{IntDatum(at + int64(i))})
		}
		pos, err := b.FindKeys(f, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range pos {
			if p != int64(i) {
				t.Fatalf("%s: key %d found at row %d, want %d", f.FileName, at+int64(i), p, i)
			}
		}
		at += f.RowCount
	}
}
