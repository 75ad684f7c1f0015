package table

import (
	"fmt"
	"path"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Rows decoded per read by a data-file row iterator, and the rows a writer
// gathers before handing them to the file writer.
const (
	bucketFilesChunkRows = 4096
	bucketFilesMaxRun    = 1024
)

// DataBucketFiles is the BucketFiles of one bucket directory of a table:
// parquet data files read and written with the table's schema.
type DataBucketFiles struct {
	fio    FileIO
	dir    string
	schema *Schema
	opts   BucketFilesOptions
	keyIdx []int
	keyTyp []DataType
	arrow  *arrow.Schema // the schema's, for the records handed to writers
}

// BucketFilesOptions say how a bucket's rewrites name and size new files.
type BucketFilesOptions struct {
	// TargetFileSize: a writer rolls to a new file once the current one
	// reaches it (CompactionOptions.TargetFileSize).
	TargetFileSize int64
	// NewFileName names each new data file (a base name, unique in the
	// bucket directory, such as data-<uuid>-<n>.parquet).
	NewFileName func() string
	// CreationTimeMs, when set, is recorded in the metadata of new files.
	CreationTimeMs *int64
	// LookupCache, when set, keeps the files FindKeys reads open across
	// calls (see DataFileCache).
	LookupCache *DataFileCache
	// KeyFilters, when set, keeps a key filter of each file written, read
	// whole or looked up (see KeyFilters and KeyFilter).
	KeyFilters *KeyFilters
}

// NewDataBucketFiles reads and writes the data files in dir, a bucket
// directory of a table with schema s.
func NewDataBucketFiles(fio FileIO, dir string, s *Schema, opts BucketFilesOptions) (*DataBucketFiles, error) {
	if opts.NewFileName == nil || opts.TargetFileSize <= 0 {
		return nil, fmt.Errorf("bucket files %s: need a file namer and a positive target size", dir)
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("bucket files %s: %w", dir, err)
	}
	b := &DataBucketFiles{fio: fio, dir: dir, schema: s, opts: opts, arrow: sch}
	for _, name := range s.TrimmedPrimaryKeys() {
		i := s.FieldIndex(name)
		if i < 0 {
			return nil, fmt.Errorf("bucket files %s: schema %d lacks primary key %q", dir, s.ID, name)
		}
		b.keyIdx = append(b.keyIdx, i)
		b.keyTyp = append(b.keyTyp, s.Fields[i].Type)
	}
	if len(b.keyIdx) == 0 {
		return nil, fmt.Errorf("bucket files %s: schema %d has no primary key outside the partition", dir, s.ID)
	}
	return b, nil
}

func (b *DataBucketFiles) path(f DataFileMeta) string { return path.Join(b.dir, f.FileName) }

// Open reads f's rows in key order, a chunk at a time.
func (b *DataBucketFiles) Open(f DataFileMeta, deleted *roaring.Bitmap) (RowIterator, error) {
	d, err := OpenDataFile(b.fio, b.path(f), b.schema)
	if err != nil {
		return nil, err
	}
	if d.NumRows() != f.RowCount {
		d.Close()
		return nil, fmt.Errorf("data file %s: %d rows, manifest says %d", b.path(f), d.NumRows(), f.RowCount)
	}
	return &dataFileRows{b: b, d: d, deleted: deleted, i: -1, end: d.NumRows()}, nil
}

// OpenRange reads the rows of f from the first page that may hold a key
// >= lo to the last that may hold one <= hi: a bounded rewrite pays for
// its share of a file, not for the whole file.
func (b *DataBucketFiles) OpenRange(f DataFileMeta, deleted *roaring.Bitmap, lo, hi []byte) (RowIterator, error) {
	it, err := b.Open(f, deleted)
	if err != nil || (lo == nil && hi == nil) {
		return it, err
	}
	rows := it.(*dataFileRows)
	a, z, err := rows.d.rowRange(keyRange{lo: lo, hi: hi, hiIncl: hi != nil})
	if err != nil {
		rows.d.Close()
		return nil, err
	}
	rows.next, rows.end = a, z
	return rows, nil
}

// FindKeys looks keys up in f through its page index: pages whose bounds
// exclude a key are not decoded, so the cost follows the keys, not the file.
func (b *DataBucketFiles) FindKeys(f DataFileMeta, keys [][]byte) ([]int64, error) {
	d, release, err := b.lookupFile(f)
	if err != nil {
		return nil, err
	}
	defer release()
	ids := make([]int32, len(keys))
	out := make([]int64, len(keys))
	for i := range ids {
		ids[i], out[i] = int32(i), -1
	}
	matches, err := d.lookup(keys, ids, nil)
	if err != nil {
		return nil, err
	}
	for _, m := range matches {
		out[m.key] = m.pos
	}
	return out, nil
}

// EncodeKey encodes a serialized key BinaryRow the way row keys are encoded.
func (b *DataBucketFiles) EncodeKey(row []byte) ([]byte, error) {
	ds, err := DecodeBinaryRow(row, b.keyTyp)
	if err != nil {
		return nil, err
	}
	return AppendKeyDatums(nil, b.keyTyp, ds), nil
}

// int64Field reads a BIGINT field of the current row of this bucket's
// iterators (for RowExpiry).
func (b *DataBucketFiles) int64Field(name string) (func(RowIterator) (int64, bool), error) {
	i := b.schema.FieldIndex(name)
	if i < 0 || b.schema.Fields[i].Type.Root != TypeBigInt {
		return nil, fmt.Errorf("schema %d has no BIGINT field %q", b.schema.ID, name)
	}
	return func(src RowIterator) (int64, bool) {
		it := src.(*dataFileRows)
		col := it.chunk.fields[i]
		if col.nulls > 0 && !bitutil.BitIsSet(col.valid, it.i) {
			return 0, false
		}
		return int64s(col)[it.i], true
	}, nil
}

// NewWriter starts a rolling writer of compaction output at level.
func (b *DataBucketFiles) NewWriter(level int) (RowWriter, error) {
	w := &dataRowWriter{b: b, level: int32(level)}
	if b.opts.KeyFilters != nil {
		w.filter = &keyFilterBuilder{}
	}
	return w, nil
}

// dataFileRows iterates a data file's rows, decoding a chunk at a time into
// buffers it reuses and encoding the chunk's keys in one pass. A writer copies
// the rows it keeps before the iterator moves on.
type dataFileRows struct {
	b       *DataBucketFiles
	d       *DataFile
	deleted *roaring.Bitmap
	chunk   rowChunk
	keys    []byte
	keyEnds []int32 // keys[keyEnds[i-1]:keyEnds[i]] is row i's key
	i       int     // current row in chunk
	next    int64   // file position of the next chunk
	end     int64   // file position after the last row to read
	err     error
	// holder, when set, holds back rows of the chunk and takes them before
	// the chunk's buffers are reused.
	holder *dataRowWriter
}

func (it *dataFileRows) Next() bool {
	for it.err == nil {
		it.i++
		if it.i >= it.chunk.n {
			if !it.load() {
				return false
			}
		}
		if it.deleted == nil || !it.deleted.Contains(uint32(it.Pos())) {
			return true
		}
	}
	return false
}

func (it *dataFileRows) load() bool {
	if it.holder != nil {
		it.holder.take()
	}
	if it.next >= it.end {
		return false
	}
	hi := min(it.next+bucketFilesChunkRows, it.end)
	if err := it.d.readChunk(it.next, hi, &it.chunk); err != nil {
		it.err = err
		return false
	}
	it.keys, it.keyEnds = it.keys[:0], it.keyEnds[:0]
	for r := range it.chunk.n {
		for k, fi := range it.b.keyIdx {
			it.keys = it.chunk.fields[fi].appendKey(it.keys, it.b.keyTyp[k], r)
		}
		it.keyEnds = append(it.keyEnds, int32(len(it.keys)))
	}
	it.i, it.next = 0, hi
	return true
}

func (it *dataFileRows) Key() []byte { return it.keyAt(it.i) }

// keyAt is the key of row i of the chunk.
func (it *dataFileRows) keyAt(i int) []byte {
	lo := int32(0)
	if i > 0 {
		lo = it.keyEnds[i-1]
	}
	return it.keys[lo:it.keyEnds[i]]
}
func (it *dataFileRows) Seq() int64      { return it.chunk.seqs[it.i] }
func (it *dataFileRows) Kind() ValueKind { return it.chunk.kinds[it.i] }
func (it *dataFileRows) Pos() int64      { return it.chunk.first + int64(it.i) }
func (it *dataFileRows) Err() error      { return it.err }
func (it *dataFileRows) Close() error    { return it.d.Close() }

// dataRowWriter writes the rows a rewrite keeps: it copies them out of their
// source chunks into a batch (contiguous rows of one chunk as one range),
// hands the file writer a batch of bucketFilesMaxRun rows at a time, and
// rolls to a new file at the target size. The file writer keeps nothing of
// a batch (parquet-go's column buffers copy the values, keys and stats are
// cloned), so every batch reuses the buffers of the one before.
type dataRowWriter struct {
	b      *DataBucketFiles
	level  int32
	w      *DataFileWriter
	done   []DataFileMeta
	filter *keyFilterBuilder // the current file's keys, with KeyFilters

	cols  []*colVec // the batch, one per schema field
	seqs  []int64
	kinds []ValueKind

	src    *dataFileRows // rows [lo,hi) of src's chunk belong to the batch
	lo, hi int           // but are not copied into it yet
}

func (w *dataRowWriter) Write(src RowIterator) error {
	it, ok := src.(*dataFileRows)
	if !ok {
		return fmt.Errorf("compaction writer: rows from %T, not a data file", src)
	}
	if w.cols == nil {
		w.cols = make([]*colVec, len(w.b.schema.Fields))
		for f := range w.cols {
			w.cols[f] = newColVec(w.b.schema.Fields[f].Type)
		}
		w.seqs = make([]int64, 0, bucketFilesMaxRun)
		w.kinds = make([]ValueKind, 0, bucketFilesMaxRun)
	}
	if w.src != it || w.hi != it.i {
		w.take()
		w.src, w.lo, w.hi = it, it.i, it.i
		it.holder = w
	}
	w.hi++
	if w.filter != nil {
		w.filter.add(it.Key())
	}
	if len(w.seqs)+w.hi-w.lo >= bucketFilesMaxRun {
		return w.flush()
	}
	return nil
}

// take copies the held-back rows into the batch.
func (w *dataRowWriter) take() {
	if w.src == nil {
		return
	}
	c := &w.src.chunk
	for f, v := range w.cols {
		v.appendRange(c.fields[f], w.lo, w.hi)
	}
	w.seqs = append(w.seqs, c.seqs[w.lo:w.hi]...)
	w.kinds = append(w.kinds, c.kinds[w.lo:w.hi]...)
	w.src.holder = nil
	w.src = nil
}

// flush writes the batch, then rolls if the file reached its target, or
// ends the file's row group once it buffers compactRowGroupBytes (or a
// quarter of a smaller target: small files take the same path). A batch
// that is one range of one source chunk, as long stretches of one input
// give, is written from the chunk's buffers without a copy.
func (w *dataRowWriter) flush() error {
	var c *rowChunk
	var lo, hi int
	if len(w.seqs) == 0 && w.src != nil {
		c, lo, hi = &w.src.chunk, w.lo, w.hi
		w.src.holder, w.src = nil, nil
	} else {
		w.take()
		if len(w.seqs) == 0 {
			return nil
		}
	}
	if w.w == nil {
		name := w.b.opts.NewFileName()
		fw, err := NewDataFileWriter(w.b.fio, path.Join(w.b.dir, name), w.b.schema, DataFileOptions{
			Level: w.level, Source: SourceCompact, CreationTimeMs: w.b.opts.CreationTimeMs,
		})
		if err != nil {
			return err
		}
		w.w = fw
	}
	var rec arrow.Record
	var err error
	if c != nil {
		rec, err = w.record(c.fields, lo, hi)
		if err == nil {
			err = w.w.Write(rec, c.seqs[lo:hi], c.kinds[lo:hi])
			rec.Release()
		}
	} else {
		rec, err = w.record(w.cols, 0, len(w.seqs))
		if err == nil {
			err = w.w.Write(rec, w.seqs, w.kinds)
			rec.Release()
		}
		w.nextBatch()
	}
	if err != nil {
		return err
	}
	if w.w.fileSize() >= w.b.opts.TargetFileSize {
		return w.closeFile()
	}
	return w.w.endRowGroupPast(min(compactRowGroupBytes, w.b.opts.TargetFileSize/4))
}

// record wraps rows [lo,hi) of vecs, one per schema field, as a record,
// without copying: the vectors must not change while it lives.
func (w *dataRowWriter) record(vecs []*colVec, lo, hi int) (arrow.Record, error) {
	cols := make([]arrow.Array, len(vecs))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, v := range vecs {
		a, err := v.arrow()
		if err != nil {
			return nil, err
		}
		if lo == 0 && hi == v.n {
			cols[i] = a
			continue
		}
		cols[i] = array.NewSlice(a, int64(lo), int64(hi))
		a.Release()
	}
	return array.NewRecordBatch(w.b.arrow, cols, int64(hi-lo)), nil
}

// nextBatch empties the batch, keeping its buffers.
func (w *dataRowWriter) nextBatch() {
	for _, v := range w.cols {
		v.reset()
	}
	w.seqs, w.kinds = w.seqs[:0], w.kinds[:0]
}

func (w *dataRowWriter) closeFile() error {
	fw := w.w
	w.w = nil
	meta, err := fw.Close()
	if err != nil {
		return err
	}
	w.done = append(w.done, meta)
	if w.filter != nil {
		flt, err := w.filter.finish(meta)
		if err != nil {
			return err
		}
		w.b.opts.KeyFilters.put(meta.FileName, flt)
	}
	return nil
}

func (w *dataRowWriter) Roll() error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.w != nil {
		return w.closeFile()
	}
	return nil
}

func (w *dataRowWriter) Finish() ([]DataFileMeta, error) {
	if err := w.Roll(); err != nil {
		return nil, err
	}
	return w.done, nil
}

func (w *dataRowWriter) Abort() {
	if w.src != nil {
		w.src.holder = nil
		w.src = nil
	}
	w.cols, w.seqs, w.kinds = nil, nil, nil
	if w.w != nil {
		w.w.Abort()
		w.w = nil
	}
	for _, f := range w.done {
		// Best effort: a file no commit names is never read.
		_ = w.b.fio.Remove(path.Join(w.b.dir, f.FileName))
	}
	w.done = nil
}
