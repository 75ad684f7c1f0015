package listing

import (
	"math/rand/v2"
	"path"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/table"
)

// countingFIO counts the reads of table metadata, by directory.
type countingFIO struct {
	table.FileIO
	mu    sync.Mutex
	reads map[string]int // "snapshot", "manifest", "index", other dir names
}

func (c *countingFIO) count(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[path.Base(path.Dir(p))]++
}

func (c *countingFIO) Open(p string) (table.ReadableFile, error) {
	c.count(p)
	return c.FileIO.Open(p)
}

func (c *countingFIO) ReadFile(p string) ([]byte, error) {
	c.count(p)
	return c.FileIO.ReadFile(p)
}

// metaReads is the number of snapshot, manifest and index reads so far.
func (c *countingFIO) metaReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads["snapshot"] + c.reads["manifest"] + c.reads["index"]
}

func testSchema() table.Schema {
	return table.Schema{
		Fields:      []table.Field{{Name: "kg", Type: table.Int()}, {Name: "k", Type: table.BigInt()}, {Name: "v", Type: table.String()}},
		PrimaryKeys: []string{"kg", "k"},
		Options:     map[string]string{table.OptionBucket: "1"},
		TimeMillis:  1700000000000,
	}
}

// writeL0 writes keys [lo, hi) as a level-0 data file and returns its entry.
func writeL0(t *testing.T, tbl *table.Table, lo, hi int64, seq int64) table.ManifestEntry {
	t.Helper()
	sch, err := tbl.Schema().ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	var seqs []int64
	for k := lo; k < hi; k++ {
		rb.Field(0).(*array.Int32Builder).Append(0)
		rb.Field(1).(*array.Int64Builder).Append(k)
		rb.Field(2).(*array.StringBuilder).Append("v")
		seqs = append(seqs, seq+k-lo)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	dir, err := tbl.BucketDir(table.EmptyBinaryRow(), 0)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := table.WriteDataFile(tbl.FileIO(), path.Join(dir, tbl.NewDataFileName()), tbl.Schema(), rec, seqs, nil, table.DataFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return table.ManifestEntry{Kind: table.FileAdd, Partition: table.EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: meta}
}

// TestListingCostFlatOverHistory commits 200 rounds shaped like the
// engine's (a data commit of a level-0 file, then a COMPACT that upgrades it
// and now and then replaces the deletion vectors), lists after each commit
// through a lister of its own, and checks that a listing reads the same
// number of metadata files at the end of the history as at its start, and
// lists exactly what a full walk does.
func TestListingCostFlatOverHistory(t *testing.T) {
	dir := t.TempDir()
	writer, err := table.Create(table.NewLocalFileIO(), dir, testSchema(), table.WithRand(rand.NewChaCha8([32]byte{1})))
	if err != nil {
		t.Fatal(err)
	}
	fio := &countingFIO{FileIO: table.NewLocalFileIO(), reads: map[string]int{}}
	reader, err := table.Open(fio, dir)
	if err != nil {
		t.Fatal(err)
	}
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	pid, err := sys.Spawn("lister", NewLister(sys, reader))
	if err != nil {
		t.Fatal(err)
	}
	p, err := actors.NewProbe(sys, "probe")
	if err != nil {
		t.Fatal(err)
	}
	list := func(id int64) (*Listed, int) {
		t.Helper()
		before := fio.metaReads()
		sys.Request(pid, &List{SnapshotID: id}, p.PID())
		m, err := actors.Expect[*Listed](p)
		if err != nil {
			t.Fatal(err)
		}
		if m.Err != nil {
			t.Fatalf("listing %d: %v", id, m.Err)
		}
		return m, fio.metaReads() - before
	}

	const rounds = 200
	var costs []int
	var firstFull int
	seq := int64(0)
	for r := int64(0); r < rounds; r++ {
		e := writeL0(t, writer, r*10, r*10+10, seq)
		seq += 10
		app, err := writer.CommitAppend([]table.ManifestEntry{e}, table.CommitInfo{User: "store", Identifier: r + 1, TimeMillis: r})
		if err != nil {
			t.Fatal(err)
		}
		m, reads := list(app.SnapshotID)
		if r == 0 {
			firstFull = reads
			if !m.Cost.FullWalk {
				t.Fatal("the first listing did not seed with a full walk")
			}
		} else {
			costs = append(costs, reads)
		}
		up := e
		up.File.Level = 1
		ch := table.CompactChange{Deleted: []table.ManifestEntry{e}, Added: []table.ManifestEntry{up}}
		if r%10 == 9 {
			ch.DVFiles = []table.BucketDV{{Partition: table.EmptyBinaryRow(), Bucket: 0,
				Vectors: map[string]*roaring.Bitmap{e.File.FileName: roaring.BitmapOf(uint32(r % 10))}}}
		}
		cmp, err := writer.CommitCompact(ch, table.CommitInfo{User: "maintenance", Identifier: r + 1, TimeMillis: r})
		if err != nil {
			t.Fatal(err)
		}
		m, reads = list(cmp.SnapshotID)
		costs = append(costs, reads)
		if r%50 == 49 {
			fresh, err := table.Open(table.NewLocalFileIO(), dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := apply(NewLiveSet(fresh.BucketPath), readFull(fresh, readPlan{target: cmp.SnapshotID}))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Files, want) {
				t.Fatalf("round %d: listing differs from a full walk:\n%+v\n%+v", r, m.Files, want)
			}
			if len(m.Files.Data) != int(r+1) || len(m.Files.Index) != 1 || !strings.HasPrefix(m.Files.Index[0].Path, "index/") {
				t.Fatalf("round %d: %d data files, index %+v", r, len(m.Files.Data), m.Files.Index)
			}
		}
	}
	early, late := maxOf(costs[:20]), maxOf(costs[len(costs)-20:])
	t.Logf("metadata reads: seed %d; per listing early max %d, late max %d", firstFull, early, late)
	if late > early {
		t.Fatalf("listing cost grew with history: %d metadata reads early, %d after %d commits", early, late, 2*rounds)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
