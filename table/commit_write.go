package table

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// WriteAndCommit writes one batch of full rows (schema order, Arrow types
// per ArrowSchema) with their change kinds (nil: all +I) and commits it as
// an APPEND snapshot: rows are grouped by (partition, bucket), sorted by
// key, the last row of each key is kept, sequence numbers continue each
// bucket's maximum, and each touched bucket gets one level-0 data file. The
// commit is idempotent by (c.User, c.Identifier): a batch already committed
// is neither written nor committed again. An empty batch writes nothing and
// reports the latest snapshot.
func (t *Table) WriteAndCommit(rec arrow.Record, kinds []ValueKind, c CommitInfo) (CommitResult, error) {
	n := int(rec.NumRows())
	if kinds != nil && len(kinds) != n {
		return CommitResult{}, fmt.Errorf("write: %d kinds for %d rows", len(kinds), n)
	}
	if int(rec.NumCols()) != len(t.schema.Fields) {
		return CommitResult{}, fmt.Errorf("write: record of %d columns, the schema has %d fields", rec.NumCols(), len(t.schema.Fields))
	}
	for i, f := range t.schema.Fields {
		if err := checkArrowColumn(f, rec.Column(i).DataType()); err != nil {
			return CommitResult{}, fmt.Errorf("write: %w", err)
		}
	}
	maxSeq, latest, skipped, err := t.prepareWrite(c)
	if err != nil || skipped.Skipped {
		return skipped, err
	}
	if n == 0 {
		return CommitResult{SnapshotID: latest}, nil
	}
	groups, err := t.groupRows(rec)
	if err != nil {
		return CommitResult{}, fmt.Errorf("write: %w", err)
	}
	var entries []ManifestEntry
	var written []string
	cleanup := func() {
		for _, p := range written {
			t.fio.Remove(p)
		}
	}
	for _, g := range groups {
		seq, ok := maxSeq[g.bucketOf]
		if !ok {
			seq = -1 // an empty bucket starts at sequence number 0
		}
		e, p, err := t.writeGroup(rec, kinds, g, seq, c.TimeMillis)
		if err != nil {
			cleanup()
			return CommitResult{}, fmt.Errorf("write: %w", err)
		}
		written = append(written, p)
		entries = append(entries, e)
	}
	r, err := t.CommitAppend(entries, c)
	if (err != nil && !errors.Is(err, ErrCommitStateUnknown)) || r.Skipped {
		cleanup()
	}
	return r, err
}

// prepareWrite looks up whether the commit is already done and, if not,
// the highest sequence number of each bucket at the latest snapshot.
func (t *Table) prepareWrite(c CommitInfo) (map[bucketOf]int64, int64, CommitResult, error) {
	t.commitMu.Lock()
	defer t.commitMu.Unlock()
	latest, err := t.latestSnapshot()
	if err != nil {
		return nil, 0, CommitResult{}, err
	}
	if id, done, err := t.findCommitted(c, CommitAppend, latest); err != nil || done {
		return nil, 0, CommitResult{SnapshotID: id, Skipped: done}, err
	}
	live, err := t.liveAt(latest)
	if err != nil {
		return nil, 0, CommitResult{}, err
	}
	maxSeq := map[bucketOf]int64{}
	for _, e := range live.files.m {
		b := bucketOf{string(e.Partition), e.Bucket}
		if cur, ok := maxSeq[b]; !ok || e.File.MaxSequenceNumber > cur {
			maxSeq[b] = e.File.MaxSequenceNumber
		}
	}
	return maxSeq, live.snapshotID, CommitResult{}, nil
}

// rowGroup is the rows of one (partition, bucket), sorted by key with one
// row per key (the last one written).
type rowGroup struct {
	bucketOf
	partition []byte
	rows      []int
}

func (t *Table) groupRows(rec arrow.Record) ([]*rowGroup, error) {
	s := t.schema
	n := int(rec.NumRows())
	keyIdx := fieldIndexes(s, s.TrimmedPrimaryKeys())
	keyCols := make([]arrow.Array, len(keyIdx))
	keyTypes := make([]DataType, len(keyIdx))
	for i, fi := range keyIdx {
		keyCols[i], keyTypes[i] = rec.Column(fi), s.Fields[fi].Type
	}
	order, err := t.routeRows(rec, n)
	if err != nil {
		return nil, err
	}
	// A batch from a sorted write buffer ascends strictly by key, and so
	// does every group of its rows: nothing to sort or drop, and no key
	// needs encoding.
	var ko keyOrder
	if ascending, _ := ko.strictlyAscending(keyCols); ascending {
		sortGroups(order)
		return order, nil
	}
	var keys KeyBatch
	if err := keys.EncodeArrow(keyCols, keyTypes); err != nil {
		return nil, err
	}
	for _, g := range order {
		// Stable: among equal keys the last written stays last. A batch
		// already in key order (a sorted write buffer) needs no sort.
		if !slices.IsSortedFunc(g.rows, keys.Compare) {
			slices.SortStableFunc(g.rows, keys.Compare)
		}
		kept := g.rows[:0]
		for j, r := range g.rows {
			if j+1 < len(g.rows) && keys.Compare(r, g.rows[j+1]) == 0 {
				continue
			}
			kept = append(kept, r)
		}
		g.rows = kept
	}
	sortGroups(order)
	return order, nil
}

// sortGroups orders groups by partition, then bucket.
func sortGroups(order []*rowGroup) {
	slices.SortFunc(order, func(a, b *rowGroup) int {
		if c := bytes.Compare(a.partition, b.partition); c != 0 {
			return c
		}
		return int(a.bucket) - int(b.bucket)
	})
}

// routeRows splits rows [0,n) by (partition, bucket), in row order.
func (t *Table) routeRows(rec arrow.Record, n int) ([]*rowGroup, error) {
	s := t.schema
	partIdx := fieldIndexes(s, s.PartitionKeys)
	if len(partIdx) == 0 && t.buckets == 1 {
		// one group: no partition or bucket key to serialize per row
		g := &rowGroup{bucketOf: bucketOf{string(EmptyBinaryRow()), 0}, partition: EmptyBinaryRow(), rows: make([]int, n)}
		for i := range g.rows {
			g.rows[i] = i
		}
		return []*rowGroup{g}, nil
	}
	bucketIdx := fieldIndexes(s, s.BucketKeys())
	groups := map[string]*rowGroup{}
	var order []*rowGroup
	var gk []byte
	for i := 0; i < n; i++ {
		part, err := rowOf(rec, s, partIdx, i)
		if err != nil {
			return nil, err
		}
		bkey, err := rowOf(rec, s, bucketIdx, i)
		if err != nil {
			return nil, err
		}
		bucket := int32(Bucket(bkey, t.buckets))
		gk = binary.BigEndian.AppendUint32(append(gk[:0], part...), uint32(bucket))
		g := groups[string(gk)]
		if g == nil {
			g = &rowGroup{bucketOf: bucketOf{string(part), bucket}, partition: part}
			groups[string(gk)] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, i)
	}
	return order, nil
}

func fieldIndexes(s *Schema, names []string) []int {
	out := make([]int, len(names))
	for i, name := range names {
		out[i] = s.FieldIndex(name)
	}
	return out
}

// rowOf serializes fields idx of row i as a BinaryRow.
func rowOf(rec arrow.Record, s *Schema, idx []int, i int) ([]byte, error) {
	types := make([]DataType, len(idx))
	vals := make([]Datum, len(idx))
	for j, fi := range idx {
		types[j] = s.Fields[fi].Type
		d, err := DatumOf(rec.Column(fi), i, types[j])
		if err != nil {
			return nil, err
		}
		vals[j] = d
	}
	return EncodeBinaryRow(types, vals), nil
}

// writeGroup writes one bucket's rows as a level-0 data file whose sequence
// numbers start after maxSeq.
func (t *Table) writeGroup(rec arrow.Record, kinds []ValueKind, g *rowGroup, maxSeq int64, timeMillis int64) (ManifestEntry, string, error) {
	sub, err := takeRows(rec, g.rows)
	if err != nil {
		return ManifestEntry{}, "", err
	}
	defer sub.Release()
	seqs := make([]int64, len(g.rows))
	var subKinds []ValueKind
	if kinds != nil {
		subKinds = make([]ValueKind, len(g.rows))
	}
	for j, r := range g.rows {
		seqs[j] = maxSeq + 1 + int64(j)
		if kinds != nil {
			subKinds[j] = kinds[r]
		}
	}
	dir, err := t.paths.bucketDir(g.partition, g.bucket)
	if err != nil {
		return ManifestEntry{}, "", err
	}
	p := path.Join(dir, t.paths.newDataFileName())
	created := timeMillis
	meta, err := WriteDataFile(t.fio, p, t.schema, sub, seqs, subKinds, DataFileOptions{Level: 0, Source: SourceAppend, CreationTimeMs: &created})
	if err != nil {
		return ManifestEntry{}, "", err
	}
	return ManifestEntry{Kind: FileAdd, Partition: g.partition, Bucket: g.bucket, TotalBuckets: int32(t.buckets), File: meta}, p, nil
}
