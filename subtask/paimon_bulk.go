package subtask

import (
	"errors"
	"fmt"
	"path"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// bulkLoad fills an empty table with sorted rows as data files of its top
// level, committed as one APPEND snapshot: with nothing older in the table
// no row needs a deletion vector or a lookup, so the rows read at once, with
// no maintenance round. Each bucket's rows form one sorted run, cut into
// files of about the table's target file size.
type bulkLoad struct {
	t       *paimonTable
	level   int32
	target  int64
	now     int64
	entries []table.ManifestEntry
	paths   []string
}

func (t *paimonTable) bulkLoad(nowMillis int64) (*bulkLoad, error) {
	if t.snapshot != 0 {
		return nil, fmt.Errorf("paimon backend: table %q holds snapshot %d: a bulk load fills an empty table", t.l.Name, t.snapshot)
	}
	o, err := table.CompactionOptionsOf(t.t.Schema())
	if err != nil {
		return nil, fmt.Errorf("paimon backend: table %q: %w", t.l.Name, err)
	}
	if o.NumLevels < 2 {
		return nil, fmt.Errorf("paimon backend: table %q has %d levels", t.l.Name, o.NumLevels)
	}
	t.bounds.known = false // the rows come from elsewhere
	return &bulkLoad{t: t, level: int32(o.NumLevels - 1), target: o.TargetFileSize, now: nowMillis}, nil
}

// bucketOf is the bucket of a key group: the table routes rows by the
// BinaryRow of its bucket key, kg alone.
func (t *paimonTable) bucketOf(kg int32) int32 {
	n := t.b.opts.Buckets
	if n == 1 {
		return 0
	}
	types := []table.DataType{t.l.pkTypes[0]}
	return int32(table.Bucket(table.EncodeBinaryRow(types, []table.Datum{table.IntDatum(int64(kg))}), n))
}

// write adds the rows of one bucket (codec schema, strictly ascending keys,
// rows of no other bucket) and writes their files.
func (b *bulkLoad) write(rec arrow.Record, bucket int32) error {
	n := rec.NumRows()
	perFile := n
	if size := recordBytes(rec); b.target > 0 && size > b.target {
		perFile = max(1, n*b.target/size)
	}
	dir, err := b.t.t.BucketDir(table.EmptyBinaryRow(), bucket)
	if err != nil {
		return err
	}
	for from := int64(0); from < n; from += perFile {
		to := min(n, from+perFile)
		part := rec.NewSlice(from, to)
		seqs := make([]int64, to-from)
		for i := range seqs {
			seqs[i] = from + int64(i)
		}
		p := path.Join(dir, b.t.t.NewDataFileName())
		meta, err := table.WriteDataFile(b.t.t.FileIO(), p, b.t.t.Schema(), part, seqs, nil,
			table.DataFileOptions{Level: b.level, Source: table.SourceAppend, CreationTimeMs: &b.now})
		part.Release()
		if err != nil {
			return fmt.Errorf("paimon backend: table %q: %w", b.t.l.Name, err)
		}
		b.paths = append(b.paths, p)
		b.entries = append(b.entries, table.ManifestEntry{Kind: table.FileAdd, Partition: table.EmptyBinaryRow(),
			Bucket: bucket, TotalBuckets: int32(b.t.b.opts.Buckets), File: meta})
	}
	return nil
}

// commit commits the files written as one APPEND snapshot and pins it.
func (b *bulkLoad) commit() error {
	t := b.t
	res, err := t.t.CommitAppend(b.entries, table.CommitInfo{User: t.b.opts.CommitUser, Identifier: t.nextIdent, TimeMillis: b.now})
	if err != nil && !errors.Is(err, table.ErrCommitStateUnknown) || res.Skipped {
		b.abort() // the files are not in the table
	}
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: commit of %d files: %w", t.l.Name, len(b.entries), err)
	}
	t.nextIdent++
	return t.pin(res.SnapshotID)
}

// abort removes the files written.
func (b *bulkLoad) abort() {
	for _, p := range b.paths {
		b.t.t.FileIO().Remove(p)
	}
	b.paths, b.entries = nil, nil
}

// recordBytes is the size of a record's buffers, about its rows' size in an
// uncompressed data file.
func recordBytes(rec arrow.Record) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
}
