package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// kvSchema is a two-column table: k INT primary key, v STRING.
func kvSchema() *Schema {
	return &Schema{
		Fields:         []Field{{ID: 0, Name: "k", Type: Int().NotNull()}, {ID: 1, Name: "v", Type: String()}},
		HighestFieldID: 1,
		PrimaryKeys:    []string{"k"},
		Options:        map[string]string{"bucket": "1", "deletion-vectors.enabled": "true"},
	}
}

type kvRow struct {
	k    int32
	v    string
	seq  int64
	kind ValueKind
}

// writeKV writes rows (sorted here) as one data file of the bucket.
func writeKV(t *testing.T, b *DataBucketFiles, name string, level int32, rows []kvRow) DataFileMeta {
	t.Helper()
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(x, y kvRow) int { return int(x.k) - int(y.k) })
	sch, err := b.schema.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	var seqs []int64
	var kinds []ValueKind
	for _, r := range rows {
		rb.Field(0).(*array.Int32Builder).Append(r.k)
		rb.Field(1).(*array.StringBuilder).Append(r.v)
		seqs = append(seqs, r.seq)
		kinds = append(kinds, r.kind)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	meta, err := WriteDataFile(b.fio, path.Join(b.dir, name), b.schema, rec, seqs, kinds, DataFileOptions{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// readVisible reads what a deletion-vector batch read returns: k -> v.
func readVisible(t *testing.T, b *DataBucketFiles, l *Levels, dvs DeletionVectors) map[int32]string {
	t.Helper()
	out := map[int32]string{}
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			it, err := b.Open(f, dvs[f.FileName])
			if err != nil {
				t.Fatal(err)
			}
			rows := it.(*dataFileRows)
			for rows.Next() {
				out[rows.int32At(0)] = rows.stringAt(1)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
	return out
}

func newKVBucket(t *testing.T, target int64) *DataBucketFiles {
	n := 0
	b, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(t.TempDir(), "bucket-0"), kvSchema(), BucketFilesOptions{
		TargetFileSize: target,
		NewFileName:    func() string { n++; return fmt.Sprintf("data-compact-%d.parquet", n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Barrier and shaping rounds over real parquet files: the invariants hold
// after each compaction, and reads match the model whenever level 0 is empty.
func TestCompactDataFiles(t *testing.T) {
	b := newKVBucket(t, 4<<10)
	s := kvSchema()
	o, err := CompactionOptionsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	o.SmallFileSize = 2 << 10
	cmp := NewKeyComparator([]DataType{Int().NotNull()})
	l, err := NewLevels(cmp, nil, o.NumLevels)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	dvs := DeletionVectors{}
	model := map[int32]string{}
	seq := int64(0)
	compact := func(unit CompactUnit) {
		plan := PlanCompaction(cmp, unit, l, o)
		res, err := Compact(plan, l, dvs, b)
		if err != nil {
			t.Fatalf("compact %s: %v", stepsString(plan), err)
		}
		if err := l.Apply(res.Deleted, res.Added); err != nil {
			t.Fatal(err)
		}
		dvs = res.DVs
		if err := CheckBucket(l, dvs, b); err != nil {
			t.Fatalf("after %s: %v", stepsString(plan), err)
		}
	}
	for round := range 25 {
		rows := map[int32]kvRow{}
		for range 50 + rng.IntN(300) {
			k := int32(rng.IntN(2000) - 1000)
			kind := KindInsert
			if rng.IntN(5) == 0 {
				kind = KindDelete
			}
			rows[k] = kvRow{k: k, v: fmt.Sprintf("v%d-%d", k, seq), seq: seq, kind: kind}
			seq++
		}
		var rs []kvRow
		for k, r := range rows {
			rs = append(rs, r)
			if r.kind.IsRetract() {
				delete(model, k)
			} else {
				model[k] = r.v
			}
		}
		if err := l.Apply(nil, []DataFileMeta{writeKV(t, b, fmt.Sprintf("data-append-%d.parquet", round), 0, rs)}); err != nil {
			t.Fatal(err)
		}
		if unit, ok := o.Universal().PickLevel0(l.NumLevels(), l.SortedRuns()); ok && rng.IntN(4) > 0 {
			compact(unit)
			if got := readVisible(t, b, l, dvs); !reflect.DeepEqual(got, model) {
				t.Fatalf("round %d: read %d rows, model has %d", round, len(got), len(model))
			}
		}
		if unit, ok := o.Universal().Pick(l.NumLevels(), l.SortedRuns()); ok {
			compact(unit)
		}
	}
	if l.RunOfLevel(l.MaxLevel()).TotalSize() == 0 {
		t.Fatal("nothing reached the max level")
	}
}

// bigFileRewrite is one level-0 file of n rows (keys 0..n-1) in a bucket
// whose target file size is target, rewritten into level 5.
type bigFileRewrite struct {
	b   *DataBucketFiles
	l   *Levels
	in  DataFileMeta
	rs  []kvRow
	res CompactResult
}

func rewriteBigFile(t *testing.T, target int64, n int32) bigFileRewrite {
	t.Helper()
	r := bigFileRewrite{b: newKVBucket(t, target)}
	for k := range n {
		r.rs = append(r.rs, kvRow{k: k, v: fmt.Sprintf("value-%08d", k*7919%100003), seq: int64(k)})
	}
	r.in = writeKV(t, r.b, "data-big.parquet", 0, r.rs)
	var err error
	if r.l, err = NewLevels(NewKeyComparator([]DataType{Int().NotNull()}), []DataFileMeta{r.in}, 6); err != nil {
		t.Fatal(err)
	}
	plan := CompactPlan{OutputLevel: 5, DropDelete: true, Steps: []CompactStep{{Kind: StepRewrite, Sections: [][]SortedRun{{{Files: []DataFileMeta{r.in}}}}}}}
	if r.res, err = Compact(plan, r.l, DeletionVectors{}, r.b); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompactRollsAtTargetSize(t *testing.T) {
	r := rewriteBigFile(t, 8<<10, 20000)
	b, l, in, res := r.b, r.l, r.in, r.res
	if len(res.Added) < 3 {
		t.Fatalf("%d output files for a %d-byte input and an 8 KiB target", len(res.Added), in.FileSize)
	}
	var rows int64
	for _, f := range res.Added {
		rows += f.RowCount
		if f.Level != 5 || f.FileSource == nil || *f.FileSource != SourceCompact {
			t.Fatalf("output %s: level %d source %v", f.FileName, f.Level, f.FileSource)
		}
	}
	if rows != in.RowCount {
		t.Fatalf("outputs hold %d rows, input %d", rows, in.RowCount)
	}
	if err := l.Apply(res.Deleted, res.Added); err != nil {
		t.Fatal(err) // also proves the outputs do not overlap
	}
	if err := CheckBucket(l, res.DVs, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(l.RunOfLevel(5).Files[0].MinKey, in.MinKey) {
		t.Fatal("first output does not start at the input's min key")
	}
}

// int32At, stringAt (null: "") and float64At copy field f of the current
// row, for tests that read rows back.
func (it *dataFileRows) int32At(f int) int32 {
	return int32(binary.LittleEndian.Uint32(it.chunk.fields[f].fixed[4*it.i:]))
}

func (it *dataFileRows) stringAt(f int) string {
	v := it.chunk.fields[f]
	return string(v.data[v.offs[it.i]:v.offs[it.i+1]])
}

func (it *dataFileRows) float64At(f int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(it.chunk.fields[f].fixed[8*it.i:]))
}
