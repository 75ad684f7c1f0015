package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// DefaultPageRows is the number of rows per data page. Every column of a file
// breaks pages at the same rows, so a probe that prunes a key page knows the
// matching page of each value column; small pages keep point reads cheap.
// Not smaller: at 256 rows a sparse probe (about one key per page) costs a
// quarter less, but a dense one up to a third more, a 100K-row commit
// 40-45% more CPU, and a zstd file 14% more bytes (4x the pages, each with
// its header, statistics, index entries and compressed frame).
const DefaultPageRows = 1024

// DefaultZstdFrameBytes is the uncompressed bytes of each frame of a zstd
// page of byte arrays; a page of less than 1.5 times this stays one frame
// (DefaultZstdFrameRows sets the frames of fixed-width columns). Against one frame per page (BenchmarkProbe, 1M rows, two runs each,
// CPU per key): 1,000 keys one file 22.3-23.2k -> 13.2-13.7k ns, four
// levels 25.6-25.8k -> 13.6-16.3k; 10,000 keys, which decompress most pages
// whole, one file 4.1-4.6k -> 4.2-4.7k, levels 5.3-5.8k -> 5.5-5.7k. File
// bytes +17% at 1M rows (+8% at 100K), encoding CPU -20% (literals of
// framed pages are not Huffman coded: framedZstdCodec). 2 KiB frames cut
// 1,000-key probes by a further fifth but cost 10,000-key probes more
// than that (+12%): each frame brings its own entropy tables.
const DefaultZstdFrameBytes = 4096

// DefaultZstdFrameRows is the values in each frame of a fixed-width value
// column's zstd page (of a page of more than 1.5 DefaultZstdFrameBytes;
// twice that of key and system columns and of the value copies of primary
// key fields, which a probe does not read frame by frame:
// framedZstdSchema): 512 bytes of BIGINT or DOUBLE, so a probe hit
// decompresses fewer rows per column than a Pebble block holds, and the
// frames of each value column hold the same rows. A BIGINT frame of PLAIN
// values is one zstd sequence per value, so decompression costs per row,
// not per byte saved. BenchmarkProbe, CPU per key paimon/pebble in one run, 4 KiB
// frames -> 128 values: 1M 1,000 keys one file 1.92 -> 1.37, levels 1.56
// -> 1.12; 10M 1,000 keys one file 1.73 -> 0.97, levels 1.52 -> 0.83;
// 10,000 keys, which read most frames of a page anyway, 1M 0.69 -> 0.71,
// 0.82 -> 0.84, 10M 1.80 -> 1.18 and 2.01 -> 1.37. 1 KiB frames of strings
// (instead of 4 KiB) cost more at 1,000 keys, and frames of 128 strings cut
// at layout marks were within noise. Files +4.5% bytes at 100K rows, +9.1%
// at 1M; encoding about 15% more CPU, still 1.00x of parquet-go writing the
// same columns. 64 values were no better while a sparse read decompressed
// every frame between a page's wanted rows; once it read only their frames,
// 128 -> 64 values of the value columns (1M, two alternating runs, and
// 10M, one run): 1M 1,000 keys one file 1.07-1.17 -> 0.91-0.95, levels
// 0.88-0.92 -> 0.75-0.82; 10,000 keys 0.68-0.75 -> 0.64-0.65, 0.80-0.82
// -> 0.77-0.78; 10M 1,000 keys 1.08 -> 0.85, 0.82 -> 0.71; 10,000 keys
// 0.87 -> 0.92, 1.16 -> 1.07. Files +4.5% bytes (1M bench rows; +2.7% with longer
// strings, +9.5% with small random counts). 64 values of the key and
// system columns too cost more bytes for no probe gain (the compaction
// tests' trees +18% against +1.2%), and 1 KiB frames of strings +31% bytes
// of a file of name-and-address strings.
const DefaultZstdFrameRows = 64

// DataFileOptions say how a data file is written and what its meta records.
type DataFileOptions struct {
	Level  int32
	Source FileSource
	// Compression of the pages: "zstd", "snappy" or "none"; empty takes the
	// schema's file.compression option, whose default is zstd as in Paimon.
	Compression  string
	Uncompressed bool // same as Compression "none"
	PageRows     int  // 0: DefaultPageRows
	// ZstdFrameBytes > 0 writes each zstd page as independent frames of
	// that many uncompressed bytes, so that a probe hit decompresses the
	// frame of its row rather than the page; 0: DefaultZstdFrameBytes; < 0:
	// one frame per page (see framedZstdCodec).
	ZstdFrameBytes int
	// ZstdFrameRows > 0 sets the frames of fixed-width columns of framed
	// zstd pages by values rather than bytes: that many values each of a
	// value column, twice that of a key or system column;
	// 0: DefaultZstdFrameRows; < 0: ZstdFrameBytes.
	ZstdFrameRows  int
	CreationTimeMs *int64
}

// DataFileWriter writes one primary-key data file from Arrow records of full
// rows (schema order, types per ArrowSchema) sorted ascending and unique by
// the trimmed primary key across all Write calls.
type DataFileWriter struct {
	fio    FileIO
	path   string
	kit    *dataFileKit
	sc     *dataFileScratch // nil once released
	layout *dataFileLayout
	opts   DataFileOptions
	file   WritableFile
	out    *countingWriter
	pw     *parquet.Writer // nil where pg writes the file
	pg     *pageWriter

	lastKey  []byte
	rows     int64
	pageFill int // rows in the current, unflushed page
	minSeq   int64
	maxSeq   int64
	deletes  int64
	minKey   []byte
	maxKey   []byte
	stats    []colStats // one per schema field
	done     bool
}

type countingWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// parquet-go cuts a column's page on its own once the column's buffered
// values reach the page buffer size, checked after each batch of values
// the writer hands it; it also preallocates the buffer of a required
// dictionary column (_VALUE_KIND) from that size. The writer hands values a
// page (or the rest of a Write's rows) at a time. Mid-page, at the end of a
// Write that later Writes continue, a cut of one column would shift its
// pages against the others', so a writer that may get several Writes has a
// buffer that fits a page of wide values. A file written by one Write has
// no such point (its last, partial page ends the file), so it takes a small
// buffer: a small checkpoint file then allocates a fraction of a megabyte.
const (
	pageBufferSize       = 1 << 20
	pageBufferSizeOneRec = 32 << 10
)

// NewDataFileWriter creates the file at path.
func NewDataFileWriter(fio FileIO, path string, s *Schema, opts DataFileOptions) (*DataFileWriter, error) {
	return newDataFileWriter(fio, path, s, opts, pageBufferSize)
}

func newDataFileWriter(fio FileIO, path string, s *Schema, opts DataFileOptions, pageBuffer int) (*DataFileWriter, error) {
	kit, err := kitFor(s, opts, pageBuffer)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	if opts.PageRows <= 0 {
		opts.PageRows = DefaultPageRows
	}
	f, err := fio.Create(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	w := &DataFileWriter{fio: fio, path: path, kit: kit, layout: kit.layout, opts: opts, file: f, out: &countingWriter{w: f}}
	w.sc = kit.scratch()
	if kit.tmpl != nil && !legacyDataFileWriter {
		if w.sc.pw == nil {
			w.sc.pw = newPageWriter(kit.tmpl, kit.layout, w.sc.codecs, w.out, pageBuffer)
		} else {
			w.sc.pw.reset(w.out)
		}
		w.pg = w.sc.pw
	} else {
		w.pw = parquet.NewWriter(w.out, w.sc.cfg...)
	}
	w.stats = make([]colStats, len(s.Fields))
	for i, f := range s.Fields {
		w.stats[i].t = f.Type
	}
	return w, nil
}

// parquetWriterOptions configure parquet-go for a data file of the layout.
func parquetWriterOptions(layout *dataFileLayout, s *Schema, opts DataFileOptions, pageBuffer int) ([]parquet.WriterOption, error) {
	cfg := []parquet.WriterOption{
		layout.parquet,
		parquet.DataPageVersion(1),
		parquet.DataPageStatistics(true),
		// Pages are cut explicitly every PageRows rows (see pageBufferSize).
		parquet.PageBufferSize(pageBuffer),
		parquet.ColumnIndexSizeLimit(func([]string) int { return 64 }),
		parquet.ColumnPageBuffers(pageBuffers),
		parquet.CreatedBy("lakestate", "1", ""),
	}
	switch codec := resolvedCodec(s, opts); codec {
	case "", "zstd":
		frameBytes := opts.ZstdFrameBytes
		if frameBytes == 0 {
			frameBytes = DefaultZstdFrameBytes
		}
		if frameBytes > 0 {
			frameRows := opts.ZstdFrameRows
			if frameRows == 0 {
				frameRows = DefaultZstdFrameRows
			}
			cfg[0] = framedZstdSchema(layout, frameBytes, frameRows)
		} else {
			cfg = append(cfg, parquet.Compression(unframedZstdCodec()))
		}
	case "snappy":
		cfg = append(cfg, parquet.Compression(&snappy.Codec{}))
	case "none", "uncompressed":
	default:
		return nil, fmt.Errorf("unsupported compression %q (zstd, snappy or none)", codec)
	}
	return cfg, nil
}

// resolvedCodec is the compression opts ask for, else the schema's.
func resolvedCodec(s *Schema, opts DataFileOptions) string {
	if opts.Uncompressed {
		return "none"
	}
	if opts.Compression != "" {
		return opts.Compression
	}
	return s.Options[OptionFileCompression]
}

// Rows is the number of rows written so far.
func (w *DataFileWriter) Rows() int64 { return w.rows }

// Write appends rows with their sequence numbers and kinds (nil kinds: all +I).
func (w *DataFileWriter) Write(rec arrow.Record, seqs []int64, kinds []ValueKind) error {
	n := int(rec.NumRows())
	s := w.layout.schema
	if w.done {
		return fmt.Errorf("data file %s: write after close", w.path)
	}
	if int(rec.NumCols()) != len(s.Fields) {
		return fmt.Errorf("data file %s: record has %d columns, schema %d has %d", w.path, rec.NumCols(), s.ID, len(s.Fields))
	}
	if len(seqs) != n || (kinds != nil && len(kinds) != n) {
		return fmt.Errorf("data file %s: %d rows but %d sequence numbers and %d kinds", w.path, n, len(seqs), len(kinds))
	}
	if n == 0 {
		return nil
	}
	for i, f := range s.Fields {
		if err := checkArrowColumn(f, rec.Column(i).DataType()); err != nil {
			return fmt.Errorf("data file %s: %w", w.path, err)
		}
		if !f.Type.Nullable && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("data file %s: column %q is NOT NULL but holds %d nulls", w.path, f.Name, rec.Column(i).NullN())
		}
	}
	keyCols := make([]arrow.Array, len(w.layout.keyIdx))
	for k, fi := range w.layout.keyIdx {
		keyCols[k] = rec.Column(fi)
	}
	if err := w.checkAscending(keyCols, n); err != nil {
		return fmt.Errorf("data file %s: %w", w.path, err)
	}

	if w.rows == 0 {
		w.minSeq, w.maxSeq = seqs[0], seqs[0]
		w.minKey = w.keyRow(keyCols, 0)
	}
	w.maxKey = w.keyRow(keyCols, n-1)
	for _, q := range seqs {
		w.minSeq, w.maxSeq = min(w.minSeq, q), max(w.maxSeq, q)
	}
	for _, k := range kinds {
		if k.IsRetract() {
			w.deletes++
		}
	}
	for i := range s.Fields {
		if w.kit.chunkStats[i] {
			continue
		}
		if err := w.stats[i].add(rec.Column(i)); err != nil {
			return fmt.Errorf("data file %s: stats of %q: %w", w.path, s.Fields[i].Name, err)
		}
	}

	for lo := 0; lo < n; {
		hi := min(n, lo+w.opts.PageRows-w.pageFill)
		if err := w.writeRows(rec, keyCols, seqs, kinds, lo, hi); err != nil {
			return fmt.Errorf("data file %s: %w", w.path, err)
		}
		w.pageFill += hi - lo
		if w.pageFill == w.opts.PageRows {
			if err := w.flushPage(); err != nil {
				return fmt.Errorf("data file %s: %w", w.path, err)
			}
		}
		lo = hi
	}
	if w.pg != nil {
		w.pg.detach()
	}
	w.rows += int64(n)
	return nil
}

// checkAscending checks that the batch's keys ascend strictly and follow
// the previous batch's last key, and keeps this batch's last key.
func (w *DataFileWriter) checkAscending(keyCols []arrow.Array, n int) error {
	types := w.layout.keyTypes
	first := w.keyAt(keyCols, 0, nil)
	if w.lastKey != nil && bytes.Compare(w.lastKey, first) >= 0 {
		return fmt.Errorf("row %d: keys not strictly ascending", w.rows)
	}
	ascending, ok := w.sc.order.strictlyAscending(keyCols)
	if !ok {
		kb := &w.sc.keys
		if err := kb.EncodeArrow(keyCols, types); err != nil {
			return err
		}
		ascending = true
		for i := 1; i < n && ascending; i++ {
			ascending = bytes.Compare(kb.Key(i-1), kb.Key(i)) < 0
		}
	}
	if !ascending {
		return fmt.Errorf("rows %d..%d: keys not strictly ascending", w.rows, w.rows+int64(n)-1)
	}
	w.lastKey = w.keyAt(keyCols, n-1, w.lastKey[:0])
	return nil
}

// keyAt appends the encoded key (see KeyBatch) of row i to dst.
func (w *DataFileWriter) keyAt(keyCols []arrow.Array, i int, dst []byte) []byte {
	for k, c := range keyCols {
		d, _ := DatumOf(c, i, w.layout.keyTypes[k]) // types were checked
		dst = appendKeyDatum(dst, w.layout.keyTypes[k], d)
	}
	return dst
}

func (w *DataFileWriter) keyRow(keyCols []arrow.Array, i int) []byte {
	bw := NewBinaryRowWriter(len(keyCols))
	for k, c := range keyCols {
		d, _ := DatumOf(c, i, w.layout.keyTypes[k]) // types were checked
		bw.Set(k, w.layout.keyTypes[k], d)
	}
	return bytes.Clone(bw.Bytes())
}

func (w *DataFileWriter) flushPage() error {
	if w.pg != nil {
		w.pageFill = 0
		return w.pg.flushPages()
	}
	for _, cw := range w.pw.ColumnWriters() {
		if err := cw.Flush(); err != nil {
			return err
		}
	}
	w.pageFill = 0
	return nil
}

// writeRows hands rows [lo,hi) of every column to the parquet column writers.
func (w *DataFileWriter) writeRows(rec arrow.Record, keyCols []arrow.Array, seqs []int64, kinds []ValueKind, lo, hi int) error {
	if w.pg != nil {
		return w.pg.appendRows(w.layout, w.kit.keyField, rec, keyCols, seqs, kinds, lo, hi)
	}
	cws := w.pw.ColumnWriters()
	l := w.layout
	// A key column and its field hold the same NOT NULL values, and the
	// column writers of required columns take values without levels: one
	// slice of values serves both.
	for k, c := range keyCols {
		vs := w.columnValues(c, l.keyTypes[k], k, lo, hi)
		if _, err := cws[k].WriteRowValues(vs); err != nil {
			return err
		}
		if _, err := cws[l.fieldCol(l.keyIdx[k])].WriteRowValues(vs); err != nil {
			return err
		}
	}
	vs := w.valueBuf(hi - lo)
	for i, q := range seqs[lo:hi] {
		vs[i] = parquet.Int64Value(q)
	}
	if _, err := cws[l.seqCol()].WriteRowValues(vs); err != nil {
		return err
	}
	insert := parquet.Int32Value(int32(KindInsert))
	for i := lo; i < hi; i++ {
		if kinds == nil {
			vs[i-lo] = insert
			continue
		}
		vs[i-lo] = parquet.Int32Value(int32(kinds[i]))
	}
	if _, err := cws[l.kindCol()].WriteRowValues(vs); err != nil {
		return err
	}
	for f := range l.schema.Fields {
		if w.kit.keyField[f] {
			continue
		}
		c := l.fieldCol(f)
		vs := w.columnValues(rec.Column(f), l.schema.Fields[f].Type, c, lo, hi)
		if _, err := cws[c].WriteRowValues(vs); err != nil {
			return err
		}
	}
	return nil
}

func (w *DataFileWriter) valueBuf(n int) []parquet.Value {
	sc := w.sc
	if cap(sc.values) < n {
		sc.values = make([]parquet.Value, n)
	}
	return sc.values[:n]
}

// columnValues converts rows [lo,hi) of a column to parquet values, in a
// buffer reused by the next call. Values of a required column carry no
// levels (its column writer reads none); those of an optional column of a
// common type are copies of leveled templates (see valueWords).
func (w *DataFileWriter) columnValues(a arrow.Array, t DataType, col, lo, hi int) []parquet.Value {
	vs := w.valueBuf(hi - lo)
	if t.Nullable && valueWordsOK && fillFromTemplate(vs, a, col, lo, hi) {
		if a.NullN() > 0 {
			null := parquet.Value{}.Level(0, 0, col)
			for i := lo; i < hi; i++ {
				if a.IsNull(i) {
					vs[i-lo] = null
				}
			}
		}
		return vs
	}
	if a.NullN() > 0 {
		for i := lo; i < hi; i++ {
			if a.IsNull(i) {
				vs[i-lo] = parquet.Value{}.Level(0, 0, col)
				continue
			}
			vs[i-lo] = parquetValue(a, i, t).Level(0, 1, col)
		}
		return vs
	}
	if t.Nullable {
		for i := lo; i < hi; i++ {
			vs[i-lo] = parquetValue(a, i, t).Level(0, 1, col)
		}
		return vs
	}
	// typed loops for the common column types; no per-value dispatch
	switch c := a.(type) {
	case *array.Int64:
		for i, v := range c.Int64Values()[lo:hi] {
			vs[i] = parquet.Int64Value(v)
		}
	case *array.Int32:
		for i, v := range c.Int32Values()[lo:hi] {
			vs[i] = parquet.Int32Value(v)
		}
	case *array.Date32:
		for i, v := range c.Date32Values()[lo:hi] {
			vs[i] = parquet.Int32Value(int32(v))
		}
	case *array.Timestamp:
		if !int64Timestamps(c) {
			for i := lo; i < hi; i++ {
				vs[i-lo] = parquetValue(a, i, t)
			}
			break
		}
		for i, v := range c.TimestampValues()[lo:hi] {
			vs[i] = parquet.Int64Value(int64(v))
		}
	case *array.Float64:
		for i, v := range c.Float64Values()[lo:hi] {
			vs[i] = parquet.DoubleValue(v)
		}
	case *array.Float32:
		for i, v := range c.Float32Values()[lo:hi] {
			vs[i] = parquet.FloatValue(v)
		}
	case *array.String:
		offs, data := c.ValueOffsets(), c.ValueBytes()
		base := offs[0]
		for i := lo; i < hi; i++ {
			vs[i-lo] = parquet.ByteArrayValue(data[offs[i]-base : offs[i+1]-base])
		}
	case *array.Binary:
		offs, data := c.ValueOffsets(), c.ValueBytes()
		base := offs[0]
		for i := lo; i < hi; i++ {
			vs[i-lo] = parquet.ByteArrayValue(data[offs[i]-base : offs[i+1]-base])
		}
	default:
		for i := lo; i < hi; i++ {
			vs[i-lo] = parquetValue(a, i, t)
		}
	}
	return vs
}

// parquetValue converts row i of an Arrow column to its parquet physical value.
func parquetValue(a arrow.Array, i int, t DataType) parquet.Value {
	switch c := a.(type) {
	case *array.Int64:
		return parquet.Int64Value(c.Value(i))
	case *array.Int32:
		return parquet.Int32Value(c.Value(i))
	case *array.String:
		offs := c.ValueOffsets()
		return parquet.ByteArrayValue(c.ValueBytes()[offs[i]-offs[0] : offs[i+1]-offs[0]])
	case *array.Binary:
		return parquet.ByteArrayValue(c.Value(i))
	case *array.Float64:
		return parquet.DoubleValue(c.Value(i))
	case *array.Float32:
		return parquet.FloatValue(c.Value(i))
	case *array.Int8:
		return parquet.Int32Value(int32(c.Value(i)))
	case *array.Int16:
		return parquet.Int32Value(int32(c.Value(i)))
	case *array.Date32:
		return parquet.Int32Value(int32(c.Value(i)))
	case *array.Boolean:
		return parquet.BooleanValue(c.Value(i))
	case *array.Timestamp:
		if t.Precision <= 6 {
			return parquet.Int64Value(int64(c.Value(i)))
		}
		return parquet.Int96Value(int96FromNanos(int64(c.Value(i))))
	case *array.Decimal128:
		v := c.Value(i)
		switch {
		case t.Precision <= 9:
			return parquet.Int32Value(int32(v.LowBits()))
		case t.Precision <= 18:
			return parquet.Int64Value(int64(v.LowBits()))
		}
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], uint64(v.HighBits()))
		binary.BigEndian.PutUint64(b[8:], v.LowBits())
		return parquet.FixedLenByteArrayValue(bytes.Clone(b[16-decimalBytes(t.Precision):]))
	}
	panic(fmt.Sprintf("data file: unexpected arrow array %T", a))
}

const (
	julianDayOfEpoch = 2440588
	nanosPerDay      = 86_400_000_000_000
)

// int96FromNanos is the legacy INT96 timestamp: nanos of day, Julian day.
func int96FromNanos(ns int64) deprecated.Int96 {
	day, nod := ns/nanosPerDay, ns%nanosPerDay
	if nod < 0 {
		day, nod = day-1, nod+nanosPerDay
	}
	return deprecated.Int96{uint32(nod), uint32(uint64(nod) >> 32), uint32(day + julianDayOfEpoch)}
}

// Close finishes and syncs the file and returns its meta (FileName is the
// base name of the path). A file with no rows is an error and is removed.
func (w *DataFileWriter) Close() (DataFileMeta, error) {
	if w.done {
		return DataFileMeta{}, fmt.Errorf("data file %s: already closed", w.path)
	}
	w.done = true
	if w.rows == 0 {
		w.abort()
		return DataFileMeta{}, fmt.Errorf("data file %s: no rows written", w.path)
	}
	var err error
	var md *format.FileMetaData
	if w.pg != nil {
		if err = w.pg.close(); err == nil {
			md = &w.pg.md
		}
	} else if err = w.pw.Close(); err == nil {
		md = w.pw.File().Metadata()
	}
	if err == nil {
		w.statsFromChunks(md)
	}
	if w.pg != nil {
		w.pg.release()
	}
	w.kit.release(w.sc)
	w.sc, w.pw, w.pg = nil, nil, nil
	if err == nil {
		err = w.file.Sync()
	}
	if cerr := w.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = w.fio.Remove(w.path)
		return DataFileMeta{}, fmt.Errorf("data file %s: %w", w.path, err)
	}
	l := w.layout
	keyStats := make([]colStats, len(l.keyIdx))
	for k, fi := range l.keyIdx {
		keyStats[k] = w.stats[fi]
	}
	deletes := w.deletes
	src := w.opts.Source
	return DataFileMeta{
		FileName:          path.Base(w.path),
		FileSize:          w.out.n,
		RowCount:          w.rows,
		MinKey:            w.minKey,
		MaxKey:            w.maxKey,
		KeyStats:          simpleStats(keyStats, false),
		ValueStats:        simpleStats(w.stats, true),
		MinSequenceNumber: w.minSeq,
		MaxSequenceNumber: w.maxSeq,
		SchemaID:          l.schema.ID,
		Level:             w.opts.Level,
		ExtraFiles:        []string{},
		CreationTimeMs:    w.opts.CreationTimeMs,
		DeleteRowCount:    &deletes,
		FileSource:        &src,
	}, nil
}

// statsFromChunks takes the stats of the string, bytes and integer fields
// from the column chunk statistics parquet-go folds from its page bounds:
// exact values in the same order (unsigned bytes, signed integers), without
// a second compare of every value.
func (w *DataFileWriter) statsFromChunks(md *format.FileMetaData) {
	for f, fromChunk := range w.kit.chunkStats {
		if !fromChunk {
			continue
		}
		s := &w.stats[f]
		c := w.layout.fieldCol(f)
		for _, rg := range md.RowGroups {
			st := &rg.Columns[c].MetaData.Statistics
			s.nulls += st.NullCount
			if st.MinValue != nil && st.MaxValue != nil {
				s.foldChunk(st.MinValue, st.MaxValue)
			}
		}
	}
}

// Abort closes and removes a file that will not be committed.
func (w *DataFileWriter) Abort() {
	if !w.done {
		w.done = true
		w.abort()
	}
}

func (w *DataFileWriter) abort() {
	if w.sc != nil {
		if w.pg != nil {
			w.pg.release()
		}
		w.kit.release(w.sc)
		w.sc, w.pw, w.pg = nil, nil, nil
	}
	_ = w.file.Close()
	_ = w.fio.Remove(w.path)
}

// WriteDataFile writes one data file from one sorted, key-unique record.
func WriteDataFile(fio FileIO, path string, s *Schema, rec arrow.Record, seqs []int64, kinds []ValueKind, opts DataFileOptions) (DataFileMeta, error) {
	w, err := newDataFileWriter(fio, path, s, opts, pageBufferSizeOneRec)
	if err != nil {
		return DataFileMeta{}, err
	}
	if err := w.Write(rec, seqs, kinds); err != nil {
		w.Abort()
		return DataFileMeta{}, err
	}
	return w.Close()
}
