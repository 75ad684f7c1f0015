package table

import (
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// countingReadable counts the bytes read from a file.
type countingReadable struct {
	ReadableFile
	n atomic.Int64
}

func (c *countingReadable) ReadAt(p []byte, off int64) (int, error) {
	c.n.Add(int64(len(p)))
	return c.ReadableFile.ReadAt(p, off)
}

// sampleTestFile writes rows (kg, k, v) with kg = i/3000 and k = 10*i, so
// most 1024-row key pages pin kg and some span two key groups, of key type
// keyType (INT or BIGINT), and opens it with a key-page cache that keeps
// samples but no page.
func sampleTestFile(t *testing.T, keyType DataType, rows int, codec string) (*DataFile, *countingReadable, []DataType) {
	t.Helper()
	s := &Schema{
		Fields:         []Field{{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "k", Type: keyType}, {ID: 2, Name: "v", Type: BigInt()}},
		HighestFieldID: 2, PrimaryKeys: []string{"kg", "k"},
		Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true", OptionFileCompression: codec},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	seqs := make([]int64, rows)
	for i := range rows {
		rb.Field(0).(*array.Int32Builder).Append(int32(i / 3000))
		if keyType.Root == TypeInt {
			rb.Field(1).(*array.Int32Builder).Append(int32(10 * i))
		} else {
			rb.Field(1).(*array.Int64Builder).Append(int64(10*i) - 1<<40)
		}
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
		seqs[i] = int64(i)
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	defer rec.Release()
	d, _ := localDataFile(t, s, rec, seqs)
	cf := &countingReadable{ReadableFile: d.f}
	d.f = cf
	// A page (4 KiB as the cache estimates it) is over the budget, and a
	// packed one over a sixteenth of it; a sample (about 250 bytes) is
	// not: the cache keeps samples only.
	d.keyCache = newKeyPageCache(4400)
	return d, cf, []DataType{Int().NotNull(), keyType}
}

// Lookups find every key, and no absent one, whether a key page is read
// whole or its sample leads to the rows it wants; a sampled lookup reads a
// run of rows, not the page.
func TestLookupSampledKeyPages(t *testing.T) {
	for _, keyType := range []DataType{Int().NotNull(), BigInt().NotNull()} {
		for _, codec := range []string{"none", "zstd"} {
			const rows = 20_000
			d, cf, types := sampleTestFile(t, keyType, rows, codec)
			kOf := func(i int) int64 {
				if keyType.Root == TypeInt {
					return int64(10 * i)
				}
				return int64(10*i) - 1<<40
			}
			key := func(kg int, k int64) []byte {
				return AppendKeyDatums(nil, types, []Datum{IntDatum(int64(kg)), IntDatum(k)})
			}
			// every row, and absent keys around each, and before and after all
			var keys [][]byte
			var want []int64
			keys, want = append(keys, key(0, kOf(0)-1)), append(want, -1)
			for i := range rows {
				keys = append(keys, key(i/3000, kOf(i)), key(i/3000, kOf(i)+1))
				want = append(want, int64(i), -1)
			}
			keys, want = append(keys, key((rows-1)/3000, kOf(rows)), key(rows, 0)), append(want, -1, -1)
			ids := make([]int32, len(keys))
			for i := range ids {
				ids[i] = int32(i)
			}
			check := func(round string, ms []probeMatch, err error, ids []int32, want []int64) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				got := map[int32]int64{}
				for _, m := range ms {
					got[m.key] = m.pos
				}
				for j, id := range ids {
					if pos, ok := got[id]; want[j] >= 0 && (!ok || pos != want[j]) || want[j] < 0 && ok {
						t.Fatalf("%v %s %s: key %d at %d (found %v), want %d", keyType, codec, round, id, pos, ok, want[j])
					}
				}
			}
			ms, err := d.lookup(keys, ids, nil)
			check("whole pages", ms, err, ids, want)
			samples := 0
			for id, cp := range d.keyCache.pages {
				if cp.page.sample == nil || !id.sample {
					t.Fatalf("%v %s: cached %+v is not a sample", keyType, codec, id)
				}
				samples++
			}
			if samples < 10 {
				t.Fatalf("%v %s: %d samples cached", keyType, codec, samples)
			}
			ms, err = d.lookup(keys, ids, nil)
			check("sampled", ms, err, ids, want)
			// single keys on pages first searched, whose samples know only
			// their bounds at first and learn entries from the runs read
			d.keyCache = newKeyPageCache(d.keyCache.budget)
			for n := range 600 {
				i := (n * 7919) % rows
				k := [][]byte{key(i/3000, kOf(i)), key(i/3000, kOf(i)+1)}
				ms, err := d.lookup(k, []int32{0, 1}, nil)
				check("first searches", ms, err, []int32{0, 1}, []int64{int64(i), -1})
			}
			// single keys, also in a page spanning two key groups, which has no sample
			for _, i := range []int{0, 63, 64, 65, 1023, 1024, 2999, 3000, 3001, 5000, 12345, rows - 1} {
				k := [][]byte{key(i/3000, kOf(i)), key(i/3000, kOf(i)+3)}
				ms, err := d.lookup(k, []int32{0, 1}, nil)
				check("single", ms, err, []int32{0, 1}, []int64{int64(i), -1})
			}
			if codec != "none" {
				continue
			}
			// A sampled page whose layout is known reads one run of rows:
			// the first lookup samples the page, the second learns its
			// layout. (The page before, which pins kg too, is passed by its
			// bounds.)
			d.keyCache = newKeyPageCache(4000)
			i := 2000
			k := [][]byte{key(i/3000, kOf(i+1))}
			for range 2 {
				if ms, err := d.lookup(k, []int32{0}, nil); err != nil || len(ms) != 1 {
					t.Fatalf("%v: %v %v", keyType, ms, err)
				}
			}
			before := cf.n.Load()
			if ms, err := d.lookup(k, []int32{0}, nil); err != nil || len(ms) != 1 {
				t.Fatalf("%v: %v %v", keyType, ms, err)
			}
			if n := cf.n.Load() - before; n != int64(keySampleEvery*intKeyWidth(keyType)) {
				t.Fatalf("%v: a sampled lookup read %d bytes, want one run of %d rows", keyType, n, keySampleEvery)
			}
		}
	}
}

// A page that fits is not cached whole when a batch first reads it for one
// key: a page that may be sampled caches its sample, another is cached on
// its next miss. Pages searched once per sweep are then cached whole as they
// fit, the cache never holding more than its budget nor a page both whole
// and sampled; once the cache is full, pages searched as rarely as what
// they would evict stay sampled; a sampled page searched often is cached
// whole in place of its sample.
func TestSampledPageCachedWholeWhenSearchedOften(t *testing.T) {
	const rows = 59 * DefaultPageRows // of which 40 pin kg (kg changes every 3,000 rows)
	d, _, types := sampleTestFile(t, BigInt().NotNull(), rows, "zstd")
	const pageBytes = cachedPageOverhead + 4*DefaultPageRows // as page() estimates a packed page
	d.keyCache = newKeyPageCache(16 * pageBytes)             // 16 such pages (they pack smaller)
	key := func(i int) []byte {
		return AppendKeyDatums(nil, types, []Datum{IntDatum(int64(i / 3000)), IntDatum(int64(10*i) - 1<<40)})
	}
	var sweep [][]byte // one key per page
	var ids []int32
	for i := 500; i < rows; i += DefaultPageRows {
		sweep, ids = append(sweep, key(i)), append(ids, int32(len(ids)))
	}
	cached := func() (pages, samples map[int]bool) {
		pages, samples = map[int]bool{}, map[int]bool{}
		for id := range d.keyCache.pages {
			if id.sample {
				samples[id.page] = true
			} else {
				pages[id.page] = true
			}
		}
		return pages, samples
	}
	for round := range upgradeAfter + 4 {
		ms, err := d.lookup(sweep, ids, nil)
		if err != nil || len(ms) != len(sweep) {
			t.Fatalf("sweep %d: %d of %d keys found, %v", round, len(ms), len(sweep), err)
		}
		pages, samples := cached()
		switch {
		case round == 0 && (len(pages) != 0 || len(samples) < 30):
			t.Fatalf("first sweep: %d pages and %d samples cached of %d pages: want samples only", len(pages), len(samples), len(sweep))
		case round == 1 && len(pages) < 10:
			t.Fatalf("second sweep: %d pages cached whole: want those that have no sample", len(pages))
		case round == upgradeAfter+3 && (len(pages) < 14 || len(samples) < 10):
			t.Fatalf("sweep %d: %d pages and %d samples cached of %d pages: want the cache full, the other pages sampled", round, len(pages), len(samples), len(sweep))
		}
		for p := range samples {
			if pages[p] {
				t.Fatalf("sweep %d: page %d cached both whole and sampled", round, p)
			}
		}
		if d.keyCache.used > d.keyCache.budget {
			t.Fatalf("sweep %d: %d bytes cached, budget %d", round, d.keyCache.used, d.keyCache.budget)
		}
	}
	_, samples := cached()
	hot := -1
	for p := range samples {
		hot = max(hot, p)
	}
	i := int(d.keyPages()[hot].span.first) + 7
	for range 1000 {
		if ms, err := d.lookup([][]byte{key(i)}, []int32{0}, nil); err != nil || len(ms) != 1 || ms[0].pos != int64(i) {
			t.Fatalf("row %d: %v %v", i, ms, err)
		}
	}
	pages, samples := cached()
	if !pages[hot] || samples[hot] {
		t.Fatalf("page %d searched 1,000 times: cached whole %v, sampled %v", hot, pages[hot], samples[hot])
	}
	if d.keyCache.used > d.keyCache.budget {
		t.Fatalf("%d bytes cached, budget %d", d.keyCache.used, d.keyCache.budget)
	}
}
