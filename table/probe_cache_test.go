package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Lookups compare only the key fields a page's bounds do not pin, and find
// the same rows whether a key page is decoded or comes from the cache: kg
// changes every 100 rows, so some 64-row pages pin it and others do not,
// and the key after kg is an INT in one file, a STRING in another, and in a
// third a BIGINT too sparse to pack (its pages, decoded through scratch
// vectors, are cached as copies of their own).
func TestLookupPinnedAndCachedKeyPages(t *testing.T) {
	for _, keyType := range []DataType{Int().NotNull(), String().NotNull(), BigInt().NotNull()} {
		s := &Schema{
			Fields:         []Field{{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "k", Type: keyType}, {ID: 2, Name: "v", Type: BigInt()}},
			HighestFieldID: 2, PrimaryKeys: []string{"kg", "k"},
			Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true"},
		}
		sch, err := s.ArrowSchema()
		if err != nil {
			t.Fatal(err)
		}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		const rows = 2000
		seqs := make([]int64, rows)
		kOf := func(i int) Datum {
			if keyType.Root == TypeString {
				return BytesDatum([]byte{byte('a' + i%100/10), byte('a' + i%10)})
			}
			if keyType.Root == TypeBigInt {
				return IntDatum(int64(3*(i%100)) << 33)
			}
			return IntDatum(int64(3 * (i % 100)))
		}
		for i := range rows {
			rb.Field(0).(*array.Int32Builder).Append(int32(i / 100))
			if d := kOf(i); keyType.Root == TypeString {
				rb.Field(1).(*array.StringBuilder).Append(string(d.Bytes))
			} else if keyType.Root == TypeBigInt {
				rb.Field(1).(*array.Int64Builder).Append(d.Int)
			} else {
				rb.Field(1).(*array.Int32Builder).Append(int32(d.Int))
			}
			rb.Field(2).(*array.Int64Builder).Append(int64(i))
			seqs[i] = int64(i)
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		d, _ := localDataFileWith(t, s, rec, seqs, DataFileOptions{PageRows: 64})
		rec.Release()
		d.keyCache = newKeyPageCache(1 << 20) // room for every page
		types := []DataType{Int().NotNull(), keyType}
		pinned := 0
		for _, pb := range d.keyPages() {
			pinned += pb.pinned
		}
		if pinned == 0 || pinned == len(d.keyPages())*2 {
			t.Fatalf("%v: %d pinned fields over %d pages: want some pages pinning kg and some not", keyType, pinned, len(d.keyPages()))
		}
		// every row present, with an absent key just above each (odd INT,
		// STRING with a suffix), and keys past the last row
		var keys [][]byte
		var want []int64
		for i := range rows {
			keys = append(keys, AppendKeyDatums(nil, types, []Datum{IntDatum(int64(i / 100)), kOf(i)}))
			want = append(want, int64(i))
			above := kOf(i)
			if keyType.Root == TypeString {
				above = BytesDatum(append(append([]byte(nil), above.Bytes...), 'z'))
			} else {
				above.Int++
			}
			keys = append(keys, AppendKeyDatums(nil, types, []Datum{IntDatum(int64(i / 100)), above}))
			want = append(want, -1)
		}
		keys = append(keys, AppendKeyDatums(nil, types, []Datum{IntDatum(rows), kOf(0)}))
		want = append(want, -1)
		ids := make([]int32, len(keys))
		for i := range ids {
			ids[i] = int32(i)
		}
		for round := range 3 { // decoded, decoded into the cache, then cached
			ms, err := d.lookup(keys, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(keys))
			for i := range got {
				got[i] = -1
			}
			for _, m := range ms {
				got[m.key] = m.pos
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v round %d: key %d at %d, want %d", keyType, round, i, got[i], want[i])
				}
			}
		}
		if !d.keyCache.holds(d.id, 0) {
			t.Fatalf("%v: first key page not cached", keyType)
		}
		packed := 0
		for _, cp := range d.keyCache.pages {
			if cp.page.packed != nil {
				packed++
			}
		}
		if want := keyType.Root == TypeInt; (packed > 0) != want {
			t.Fatalf("%v: %d packed pages cached", keyType, packed)
		}
		d.Close()
		if d.keyCache.holds(d.id, 0) {
			t.Fatalf("%v: key page cached after the file closed", keyType)
		}
	}
}

// The cache stays within its budget and accounts for what it holds.
func TestKeyPageCacheBudget(t *testing.T) {
	c := newKeyPageCache(64 << 10)
	page := func() *keyPage {
		v := newColVec(BigInt().NotNull())
		v.fixed = make([]byte, 1000)
		return &keyPage{vecs: []*colVec{v}}
	}
	for i := range 500 {
		c.add(keyPageID{file: uint64(i % 3), page: i}, page())
		if i%2 == 0 {
			c.getPage(keyPageID{file: uint64(i % 3), page: i}, false)
		}
		sum := 0
		for _, p := range c.pages {
			sum += p.size
		}
		if c.used != sum || c.used > c.budget {
			t.Fatalf("after %d adds: used %d, pages hold %d, budget %d", i+1, c.used, sum, c.budget)
		}
	}
	if len(c.pages) < 40 {
		t.Fatalf("%d pages of ~1.2 KB cached in 64 KB", len(c.pages))
	}
	c.dropFile(1)
	for id := range c.pages {
		if id.file == 1 {
			t.Fatalf("page %v of a dropped file cached", id)
		}
	}
	big := newColVec(BigInt().NotNull())
	big.fixed = make([]byte, c.budget/8)
	c.add(keyPageID{file: 9}, &keyPage{vecs: []*colVec{big}})
	if c.holds(9, 0) {
		t.Fatal("a page over a sixteenth of the budget was cached")
	}
}

// searchFrom finds the first row at or above from where the predicate
// turns true, bisecting or galloping.
func TestSearchFrom(t *testing.T) {
	for n := range 40 {
		for from := range n + 1 {
			for first := from; first <= n; first++ {
				touched := 0
				got := searchFrom(from, n, func(i int) bool {
					if i < from || i >= n {
						t.Fatalf("n=%d from=%d: probed row %d", n, from, i)
					}
					touched++
					return i >= first
				})
				if got != first {
					t.Fatalf("n=%d from=%d first=%d: got %d", n, from, first, got)
				}
				if from > 0 && touched > 2*bitsLen(first-from+1)+1 {
					t.Fatalf("n=%d from=%d first=%d: %d rows touched", n, from, first, touched)
				}
			}
		}
	}
}

func bitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}

// A key page missed for the first time in a while is decoded for the batch
// and not cached (a page that may be sampled caches its sample), unless the
// batch searches it for upgradeAfter keys or more; missed again, it is
// cached whole.
func TestKeyPageCachedOnItsSecondMiss(t *testing.T) {
	const rows = 12 * DefaultPageRows
	d, _, types := sampleTestFile(t, BigInt().NotNull(), rows, "none")
	d.keyCache = newKeyPageCache(1 << 20)
	key := func(i int) []byte {
		return AppendKeyDatums(nil, types, []Datum{IntDatum(int64(i / 3000)), IntDatum(int64(10*i) - 1<<40)})
	}
	rowOf := func(p int) int { return int(d.keyPages()[p].span.first) + 100 }
	lookup := func(rs ...int) {
		t.Helper()
		var keys [][]byte
		var ids []int32
		for _, r := range rs {
			keys, ids = append(keys, key(r)), append(ids, int32(len(ids)))
		}
		ms, err := d.lookup(keys, ids, nil)
		if err != nil || len(ms) != len(rs) {
			t.Fatalf("rows %v: %v, %v", rs, ms, err)
		}
		for i, m := range ms {
			if m.pos != int64(rs[i]) {
				t.Fatalf("row %d found at %d", rs[i], m.pos)
			}
		}
	}
	whole := func(p int) bool { return d.keyCache.pages[keyPageID{file: d.id, page: p}] != nil }
	sampled := func(p int) bool { return d.keyCache.pages[keyPageID{file: d.id, page: p, sample: true}] != nil }
	spanning, pinning := -1, -1
	for p, pb := range d.keyPages() {
		if pb.pinned == 0 && spanning < 0 {
			spanning = p
		}
		if pb.pinned == 1 && pinning < 0 {
			pinning = p
		}
	}
	if spanning < 0 || pinning < 0 {
		t.Fatal("want a page spanning key groups and one pinning its key group")
	}
	lookup(rowOf(spanning))
	if whole(spanning) || sampled(spanning) {
		t.Fatal("a page spanning key groups is cached on its first miss")
	}
	lookup(rowOf(spanning))
	if !whole(spanning) {
		t.Fatal("a page spanning key groups is not cached on its second miss")
	}
	lookup(rowOf(pinning))
	if whole(pinning) || !sampled(pinning) {
		t.Fatalf("a page pinning its key group, searched for one key: cached whole %v, sampled %v; want its sample", whole(pinning), sampled(pinning))
	}
	dense := pinning + 1
	for d.keyPages()[dense].pinned != 1 {
		dense++
	}
	r := rowOf(dense)
	lookup(r, r+1, r+2, r+3)
	if !whole(dense) || sampled(dense) {
		t.Fatalf("a page searched for %d keys by one batch: cached whole %v, sampled %v", upgradeAfter, whole(dense), sampled(dense))
	}
}
