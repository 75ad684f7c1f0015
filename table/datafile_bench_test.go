package table

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// benchSchema is the benchmark state table: PK [kg, key] and three values.
func benchSchema(dv bool) *Schema {
	s := &Schema{
		Fields: []Field{
			{ID: 0, Name: "kg", Type: Int().NotNull()},
			{ID: 1, Name: "key", Type: BigInt().NotNull()},
			{ID: 2, Name: "count", Type: BigInt()},
			{ID: 3, Name: "sum", Type: Double()},
			{ID: 4, Name: "label", Type: String()},
		},
		HighestFieldID: 4,
		PrimaryKeys:    []string{"kg", "key"},
		Options:        map[string]string{"bucket": "1", "file.format": "parquet"},
	}
	if dv {
		s.Options[OptionDeletionVectors] = "true"
	}
	return s
}

const benchKeyGroups = 128

// benchKG is the key group of a benchmark key, so rows sorted by key index
// are not sorted by (kg, key): benchRows sorts them.
func benchKG(k int64) int32 { return int32((uint64(k) * 0x9E3779B97F4A7C15) >> 57) }

// benchRow is one benchmark row; parquet-go's plain writer encodes it.
type benchRow struct {
	KG    int32   `parquet:"kg"`
	Key   int64   `parquet:"key"`
	Count int64   `parquet:"count,optional"`
	Sum   float64 `parquet:"sum,optional"`
	Label string  `parquet:"label,optional"`
}

// benchRows are rows for keys[i] (ascending by (kg, key)), version ver.
func benchRows(keys []int64, ver int) []benchRow {
	rows := make([]benchRow, len(keys))
	for i, k := range keys {
		rows[i] = benchRow{KG: benchKG(k), Key: k, Count: k * int64(ver+1), Sum: float64(k) / 3, Label: fmt.Sprintf("label-%010d", k%100000)}
	}
	return rows
}

// sortedBenchKeys returns the keys of [from, from+n) ordered by (kg, key).
func sortedBenchKeys(from, n int64, step int64) []int64 {
	byKG := make([][]int64, benchKeyGroups)
	for k := from; k < from+n*step; k += step {
		g := benchKG(k)
		byKG[g] = append(byKG[g], k)
	}
	out := make([]int64, 0, n)
	for _, ks := range byKG {
		out = append(out, ks...)
	}
	return out
}

func benchRecord(s *Schema, rows []benchRow) arrow.Record {
	sch, _ := s.ArrowSchema()
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	kg, key := b.Field(0).(*array.Int32Builder), b.Field(1).(*array.Int64Builder)
	cnt, sum, lbl := b.Field(2).(*array.Int64Builder), b.Field(3).(*array.Float64Builder), b.Field(4).(*array.StringBuilder)
	for _, r := range rows {
		kg.Append(r.KG)
		key.Append(r.Key)
		cnt.Append(r.Count)
		sum.Append(r.Sum)
		lbl.Append(r.Label)
	}
	return b.NewRecordBatch()
}

// processCPU is the CPU time the process has used. On a shared machine a
// benchmark's wall time measures the neighbours as much as the code, so
// the benchmarks here also report per CPU second.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memFS is an in-memory FileIO, so an encoding benchmark measures no I/O.
type memFS struct {
	mu    sync.Mutex
	files map[string][]byte
}

type memWritable struct {
	fs   *memFS
	path string
	buf  bytes.Buffer
}

func (w *memWritable) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memWritable) Sync() error                 { return nil }
func (w *memWritable) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.fs.files[w.path] = w.buf.Bytes()
	return nil
}

// sinkFS is a memFS whose files write into one reused buffer, as the
// parquet-go side of an encoding benchmark does.
type sinkFS struct {
	*memFS
	buf bytes.Buffer
}

type sinkWritable struct{ buf *bytes.Buffer }

func (w sinkWritable) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (sinkWritable) Sync() error                   { return nil }
func (sinkWritable) Close() error                  { return nil }

func (m *sinkFS) Create(string) (WritableFile, error) {
	m.buf.Reset()
	return sinkWritable{&m.buf}, nil
}

func newMemFS() *memFS { return &memFS{files: map[string][]byte{}} }

func (m *memFS) Open(p string) (ReadableFile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return memFile{bytes.NewReader(b)}, nil
}
func (m *memFS) ReadFile(p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return b, nil
}
func (m *memFS) Create(p string) (WritableFile, error)     { return &memWritable{fs: m, path: p}, nil }
func (m *memFS) PublishExclusive(tmp, target string) error { return m.Rename(tmp, target) }
func (m *memFS) Rename(src, dst string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[dst] = m.files[src]
	delete(m.files, src)
	return nil
}
func (m *memFS) Link(src, dst string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[dst] = m.files[src]
	return nil
}
func (m *memFS) Remove(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, p)
	return nil
}
func (m *memFS) RemoveAll(string) error { return nil }
func (m *memFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for p := range m.files {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	return out, nil
}
func (m *memFS) Stat(p string) (int64, error) {
	b, err := m.ReadFile(p)
	return int64(len(b)), err
}
func (m *memFS) SyncDir(string) error { return nil }

// benchPhysRow is one physical row of a data file of benchSchema: the key
// columns, the system columns, then the fields, as parquet-go's generic
// writer encodes it.
type benchPhysRow struct {
	KeyKG int32   `parquet:"_KEY_kg"`
	KeyK  int64   `parquet:"_KEY_key"`
	Seq   int64   `parquet:"_SEQUENCE_NUMBER"`
	Kind  int8    `parquet:"_VALUE_KIND"`
	KG    int32   `parquet:"kg"`
	Key   int64   `parquet:"key"`
	Count int64   `parquet:"count,optional"`
	Sum   float64 `parquet:"sum,optional"`
	Label string  `parquet:"label,optional"`
}

func benchPhysRows(rows []benchRow, seqs []int64) []benchPhysRow {
	out := make([]benchPhysRow, len(rows))
	for i, r := range rows {
		out[i] = benchPhysRow{KeyKG: r.KG, KeyK: r.Key, Seq: seqs[i], KG: r.KG, Key: r.Key, Count: r.Count, Sum: r.Sum, Label: r.Label}
	}
	return out
}

// BenchmarkCommit100K writes a 100K-row batch (kg INT, key BIGINT, three
// values) side by side: parquet-go encoding the same rows plainly
// (parquet-go-plain: the five fields, parquet-go's defaults), parquet-go
// encoding the physical rows of a data file (parquet-go-physical: the key
// and system columns too, with the data file's schema, writer options and
// page cuts), this package's data-file encoding (key columns, system
// columns, stats, page index; no I/O), and a full commit (data file synced
// plus an APPEND snapshot) into a local table.
func BenchmarkCommit100K(b *testing.B) { benchCommit(b, 100_000, true) }

// BenchmarkCommit10M is BenchmarkCommit100K at 10M rows, encodings only
// and a commit to memory; it runs only with LAKESTATE_BENCH_10M=1 (its
// setup alone takes seconds and gigabytes).
func BenchmarkCommit10M(b *testing.B) {
	if os.Getenv("LAKESTATE_BENCH_10M") == "" {
		b.Skip("set LAKESTATE_BENCH_10M=1 to run")
	}
	benchCommit(b, 10_000_000, false)
}

func benchCommit(b *testing.B, n int, local bool) {
	s := benchSchema(true)
	keys := sortedBenchKeys(0, int64(n), 1)
	rows := benchRows(keys, 0)
	rec := benchRecord(s, rows)
	defer rec.Release()
	seqs := seqRange(0, n)
	phys := benchPhysRows(rows, seqs)
	layout, err := newDataFileLayout(s)
	if err != nil {
		b.Fatal(err)
	}
	var cpu0 time.Duration
	start := func() { cpu0 = processCPU() }
	report := func(b *testing.B) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(n)*float64(b.N)/(processCPU()-cpu0).Seconds(), "rows/cpu-s")
	}
	plainCodecs := map[string][]parquet.WriterOption{
		"zstd": {parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest, Concurrency: 1})},
		"none": nil,
	}
	for _, codec := range []string{"none", "zstd", "snappy"} {
		if opts, ok := plainCodecs[codec]; ok {
			b.Run("parquet-go-plain-"+codec, func(b *testing.B) {
				var buf bytes.Buffer
				start()
				for b.Loop() {
					buf.Reset()
					w := parquet.NewGenericWriter[benchRow](&buf, opts...)
					if _, err := w.Write(rows); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				report(b)
			})
			b.Run("parquet-go-physical-"+codec, func(b *testing.B) {
				opts, err := parquetWriterOptions(layout, s, DataFileOptions{Compression: codec}, pageBufferSizeOneRec)
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				start()
				for b.Loop() {
					buf.Reset()
					w := parquet.NewGenericWriter[benchPhysRow](&buf, opts...)
					for lo := 0; lo < n; lo += DefaultPageRows {
						if _, err := w.Write(phys[lo:min(n, lo+DefaultPageRows)]); err != nil {
							b.Fatal(err)
						}
						for _, cw := range w.ColumnWriters() {
							if err := cw.Flush(); err != nil {
								b.Fatal(err)
							}
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(buf.Len()), "file-bytes")
				report(b)
			})
		}
		encode := func(b *testing.B) {
			fio := &sinkFS{memFS: newMemFS()}
			start()
			for b.Loop() {
				if _, err := WriteDataFile(fio, "bucket-0/data.parquet", s, rec, seqs, nil, DataFileOptions{Compression: codec}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fio.buf.Len()), "file-bytes")
			report(b)
		}
		b.Run("datafile-encode-"+codec, encode)
		// the same files through parquet-go's writer (legacyDataFileWriter)
		b.Run("datafile-encode-parquet-go-"+codec, func(b *testing.B) { withLegacyWriter(func() { encode(b) }) })
	}
	b.Run("write-and-commit-mem-none", func(b *testing.B) {
		ns := *s
		ns.Options = maps.Clone(s.Options)
		ns.Options[OptionFileCompression] = "none"
		tbl, err := Create(newMemFS(), "t", ns)
		if err != nil {
			b.Fatal(err)
		}
		id := int64(0)
		start()
		for b.Loop() {
			id++
			if _, err := tbl.WriteAndCommit(rec, nil, CommitInfo{User: "bench", Identifier: id}); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	if !local {
		return
	}
	newLocal := func(b *testing.B) (commit func()) {
		dir := filepath.Join(b.TempDir(), "t")
		tbl, err := Create(NewLocalFileIO(), dir, *s)
		if err != nil {
			b.Fatal(err)
		}
		id := int64(0)
		return func() {
			id++
			bdir, _ := tbl.BucketDir(EmptyBinaryRow(), 0)
			m, err := WriteDataFile(NewLocalFileIO(), path.Join(bdir, tbl.NewDataFileName()), s, rec, seqRange(id*int64(n), n), nil, DataFileOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tbl.CommitAppend([]ManifestEntry{{Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: m}}, CommitInfo{User: "bench", Identifier: id}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("commit-local", func(b *testing.B) {
		commit := newLocal(b)
		start()
		for b.Loop() {
			commit()
		}
		report(b)
	})
	// The measure: a full commit against parquet-go writing the
	// same rows plainly with zstd, alternating in one loop so that both see
	// the same machine, each charged the process CPU of its own turns.
	b.Run("commit-local-vs-plain-zstd", func(b *testing.B) {
		commit := newLocal(b)
		opts := plainCodecs["zstd"]
		var buf bytes.Buffer
		var plainCPU, commitCPU time.Duration
		for b.Loop() {
			t0 := processCPU()
			buf.Reset()
			w := parquet.NewGenericWriter[benchRow](&buf, opts...)
			if _, err := w.Write(rows); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			t1 := processCPU()
			commit()
			plainCPU, commitCPU = plainCPU+t1-t0, commitCPU+processCPU()-t1
		}
		b.ReportMetric(float64(plainCPU.Microseconds())/1e3/float64(b.N), "plain-cpu-ms/op")
		b.ReportMetric(float64(commitCPU.Microseconds())/1e3/float64(b.N), "commit-cpu-ms/op")
		b.ReportMetric(commitCPU.Seconds()/plainCPU.Seconds(), "commit/plain-cpu")
	})
}
