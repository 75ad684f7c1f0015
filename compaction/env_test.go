package compaction

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/table"
)

// countingFIO counts what is read from the table directory.
type countingFIO struct {
	table.FileIO
	mu        sync.Mutex
	opens     map[string]int // by parent directory name
	bytesRead int64
	// onCreate, when set, sees every file created and may wrap it.
	onCreate func(p string, w table.WritableFile) table.WritableFile
}

func (c *countingFIO) Create(p string) (table.WritableFile, error) {
	w, err := c.FileIO.Create(p)
	c.mu.Lock()
	on := c.onCreate
	c.mu.Unlock()
	if err != nil || on == nil {
		return w, err
	}
	return on(p, w), nil
}

func (c *countingFIO) setOnCreate(f func(p string, w table.WritableFile) table.WritableFile) {
	c.mu.Lock()
	c.onCreate = f
	c.mu.Unlock()
}

func newCountingFIO() *countingFIO {
	return &countingFIO{FileIO: table.NewLocalFileIO(), opens: map[string]int{}}
}

func (c *countingFIO) Open(p string) (table.ReadableFile, error) {
	f, err := c.FileIO.Open(p)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.opens[path.Base(path.Dir(p))]++
	c.mu.Unlock()
	return &countingFile{ReadableFile: f, c: c}, nil
}

func (c *countingFIO) ReadFile(p string) ([]byte, error) {
	b, err := c.FileIO.ReadFile(p)
	c.mu.Lock()
	c.opens[path.Base(path.Dir(p))]++
	c.bytesRead += int64(len(b))
	c.mu.Unlock()
	return b, err
}

// dataReads is the data files opened and the bytes read so far.
func (c *countingFIO) dataReads() (opens int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for dir, n := range c.opens {
		if dir != "snapshot" && dir != "manifest" && dir != "index" && dir != "schema" {
			opens += n
		}
	}
	return opens, c.bytesRead
}

type countingFile struct {
	table.ReadableFile
	c *countingFIO
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.ReadableFile.ReadAt(p, off)
	f.c.mu.Lock()
	f.c.bytesRead += int64(n)
	f.c.mu.Unlock()
	return n, err
}

// row is one value of the model: v and the write time ts (nil: none).
type row struct {
	v  string
	ts *int64
}

// env is a state table with a store's writer handle and the model of what
// readers must see.
type env struct {
	tb      testing.TB
	dir     string
	fio     *countingFIO
	writer  *table.Table // the store's handle
	tbl     *table.Table // the session's handle, over fio
	buckets int
	seq     map[int32]int64
	model   map[int64]row
	commits int64
	now     int64
}

// kvSchema: PK (kg INT, k BIGINT), v STRING, ts BIGINT (write time).
func kvSchema(buckets int, opts map[string]string) table.Schema {
	o := map[string]string{table.OptionBucket: fmt.Sprint(buckets)}
	for k, v := range opts {
		o[k] = v
	}
	return table.Schema{
		Fields: []table.Field{
			{Name: "kg", Type: table.Int()}, {Name: "k", Type: table.BigInt()},
			{Name: "v", Type: table.String()}, {Name: "ts", Type: table.BigInt()},
		},
		PrimaryKeys: []string{"kg", "k"},
		Options:     o,
		TimeMillis:  1700000000000,
	}
}

func newEnv(tb testing.TB, buckets int, opts map[string]string) *env {
	tb.Helper()
	dir := tb.TempDir()
	w, err := table.Create(table.NewLocalFileIO(), dir, kvSchema(buckets, opts), table.WithRand(rand.NewChaCha8([32]byte{1})))
	if err != nil {
		tb.Fatal(err)
	}
	e := &env{tb: tb, dir: dir, writer: w, fio: newCountingFIO(), buckets: buckets, seq: map[int32]int64{}, model: map[int64]row{}, now: 1700000000000}
	e.tbl, err = table.Open(e.fio, dir, table.WithRand(rand.NewChaCha8([32]byte{2})))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

var keyTypes = []table.DataType{table.Int().NotNull(), table.BigInt().NotNull()}

func (e *env) bucketOf(k int64) int32 {
	return int32(table.Bucket(table.EncodeBinaryRow(keyTypes, []table.Datum{table.IntDatum(0), table.IntDatum(k)}), e.buckets))
}

// commit writes one data commit, as the store's flush does: puts (k -> v,
// with write time ts when ts != nil) and deletes, one level-0 file per
// touched bucket. It returns the snapshot id.
func (e *env) commit(puts map[int64]row, dels []int64) int64 {
	e.tb.Helper()
	type change struct {
		k   int64
		r   row
		del bool
	}
	byBucket := map[int32][]change{}
	for k, r := range puts {
		byBucket[e.bucketOf(k)] = append(byBucket[e.bucketOf(k)], change{k: k, r: r})
	}
	for _, k := range dels {
		if _, ok := puts[k]; ok {
			e.tb.Fatalf("key %d both put and deleted in one commit", k)
		}
		byBucket[e.bucketOf(k)] = append(byBucket[e.bucketOf(k)], change{k: k, del: true})
	}
	sch, err := e.writer.Schema().ArrowSchema()
	if err != nil {
		e.tb.Fatal(err)
	}
	var added []table.ManifestEntry
	for _, b := range slices.Sorted(mapKeys(byBucket)) {
		cs := byBucket[b]
		slices.SortFunc(cs, func(x, y change) int { return int(x.k - y.k) })
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		var seqs []int64
		var kinds []table.ValueKind
		for _, c := range cs {
			rb.Field(0).(*array.Int32Builder).Append(0)
			rb.Field(1).(*array.Int64Builder).Append(c.k)
			switch {
			case c.del:
				rb.Field(2).(*array.StringBuilder).AppendNull()
				rb.Field(3).(*array.Int64Builder).AppendNull()
				kinds = append(kinds, table.KindDelete)
			default:
				rb.Field(2).(*array.StringBuilder).Append(c.r.v)
				if c.r.ts != nil {
					rb.Field(3).(*array.Int64Builder).Append(*c.r.ts)
				} else {
					rb.Field(3).(*array.Int64Builder).AppendNull()
				}
				kinds = append(kinds, table.KindInsert)
			}
			seqs = append(seqs, e.seq[b])
			e.seq[b]++
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		dir, err := e.writer.BucketDir(table.EmptyBinaryRow(), b)
		if err != nil {
			e.tb.Fatal(err)
		}
		meta, err := table.WriteDataFile(e.writer.FileIO(), path.Join(dir, e.writer.NewDataFileName()), e.writer.Schema(), rec, seqs, kinds, table.DataFileOptions{})
		rec.Release()
		if err != nil {
			e.tb.Fatal(err)
		}
		added = append(added, table.ManifestEntry{Kind: table.FileAdd, Partition: table.EmptyBinaryRow(), Bucket: b, TotalBuckets: int32(e.buckets), File: meta})
	}
	e.commits++
	res, err := e.writer.CommitAppend(added, table.CommitInfo{User: "store", Identifier: e.commits, TimeMillis: e.now})
	if err != nil {
		e.tb.Fatal(err)
	}
	for k, r := range puts {
		e.model[k] = r
	}
	for _, k := range dels {
		delete(e.model, k)
	}
	return res.SnapshotID
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// physRow is a row as stored: one per key and file.
type physRow struct {
	file  string
	level int32
	v     string
	ts    *int64
}

// visible reads what a deletion-vector reader sees at the newest snapshot:
// the level >= 1 rows not deleted. It fails on a key seen twice. all
// returns every stored row of level >= 1 files, deleted or not.
func (e *env) visible() (vis map[int64]physRow, all map[int64][]physRow) {
	e.tb.Helper()
	fresh, err := table.Open(table.NewLocalFileIO(), e.dir)
	if err != nil {
		e.tb.Fatal(err)
	}
	vis, all = map[int64]physRow{}, map[int64][]physRow{}
	latest, ok, err := fresh.LatestSnapshotID()
	if err != nil || !ok {
		return vis, all
	}
	live, index, err := fresh.LiveFiles(latest)
	if err != nil {
		e.tb.Fatal(err)
	}
	dvs := map[string]map[uint32]bool{}
	for _, ie := range index {
		m, err := fresh.ReadDeletionVectors(ie)
		if err != nil {
			e.tb.Fatal(err)
		}
		for name, bm := range m {
			dvs[name] = map[uint32]bool{}
			for _, p := range bm.ToArray() {
				dvs[name][p] = true
			}
		}
	}
	for _, le := range live {
		if le.File.Level == 0 {
			continue
		}
		dir, _ := fresh.BucketDir(le.Partition, le.Bucket)
		df, err := table.OpenDataFile(fresh.FileIO(), path.Join(dir, le.File.FileName), fresh.Schema())
		if err != nil {
			e.tb.Fatal(err)
		}
		rows, err := df.ReadAll()
		if err != nil {
			e.tb.Fatal(err)
		}
		ks := rows.Rows.Column(1).(*array.Int64)
		vs := rows.Rows.Column(2).(*array.String)
		tss := rows.Rows.Column(3).(*array.Int64)
		for i := 0; i < ks.Len(); i++ {
			r := physRow{file: le.File.FileName, level: le.File.Level, v: vs.Value(i)}
			if tss.IsValid(i) {
				ts := tss.Value(i)
				r.ts = &ts
			}
			k := ks.Value(i)
			all[k] = append(all[k], r)
			if dvs[le.File.FileName][uint32(rows.First)+uint32(i)] {
				continue
			}
			if rows.Kinds[i].IsRetract() {
				e.tb.Fatalf("key %d: visible retraction in %s", k, le.File.FileName)
			}
			if prev, dup := vis[k]; dup {
				e.tb.Fatalf("key %d visible twice: %s (level %d) and %s (level %d)", k, prev.file, prev.level, r.file, r.level)
			}
			vis[k] = r
		}
		rows.Release()
		df.Close()
	}
	return vis, all
}

// checkModel asserts that readers see exactly the model (rows of the model
// that expired may still be stored).
func (e *env) checkModel(expired func(row) bool) {
	e.tb.Helper()
	vis, _ := e.visible()
	for k, want := range e.model {
		got, ok := vis[k]
		if expired != nil && expired(want) {
			if ok && got.v != want.v {
				e.tb.Fatalf("expired key %d reads %q, was %q", k, got.v, want.v)
			}
			continue
		}
		if !ok || got.v != want.v {
			e.tb.Fatalf("key %d reads %q (present %t), want %q", k, got.v, ok, want.v)
		}
	}
	for k := range vis {
		if _, ok := e.model[k]; !ok {
			e.tb.Fatalf("key %d is visible but was deleted or never written", k)
		}
	}
}

func (e *env) session(cfg Config) *Session {
	e.tb.Helper()
	cfg.CheckInvariants = true
	s, err := NewSession(e.tbl, cfg, 1)
	if err != nil {
		e.tb.Fatal(err)
	}
	return s
}

// round commits puts as one data commit and runs the barrier round.
func (e *env) round(s *Session, puts map[int64]row, dels []int64) RoundResult {
	e.tb.Helper()
	snap := e.commit(puts, dels)
	e.now += 1000
	res, err := s.Barrier(snap, e.now)
	if err != nil {
		e.tb.Fatal(err)
	}
	return res
}

// shapeAll runs jobs until the session has none, and returns how many ran.
func (e *env) shapeAll(s *Session) int {
	e.tb.Helper()
	n := 0
	for j := s.NextJob(e.now); j != nil; j = s.NextJob(e.now) {
		if err := s.Finish(j.Run()); err != nil {
			e.tb.Fatal(err)
		}
		n++
		if n > 10000 {
			e.tb.Fatal("shaping does not converge")
		}
	}
	return n
}

// puts is rows lo..hi-1 with values tagged v, written at ts 1 (far past
// any TTL a test sets only where it says so).
func puts(lo, hi int64, v string) map[int64]row {
	m := map[int64]row{}
	ts := int64(1)
	for k := lo; k < hi; k++ {
		m[k] = row{v: fmt.Sprintf("%s-%d", v, k), ts: &ts}
	}
	return m
}

// levelsOf lists the session's files per level of bucket 0.
func levelsOf(s *Session) map[int]int {
	out := map[int]int{}
	for _, tr := range s.trees {
		for _, f := range tr.levels.AllFiles() {
			out[int(f.Level)]++
		}
	}
	return out
}
