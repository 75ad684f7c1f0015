package table

import (
	"bytes"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
)

// randomSortedKeys draws n distinct keys of 1 to 40 random bytes, ascending.
func randomSortedKeys(rng *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	for len(seen) < n {
		k := make([]byte, 1+rng.IntN(40))
		for i := range k {
			k[i] = byte(rng.IntN(256))
		}
		seen[string(k)] = true
	}
	var out [][]byte
	for k := range seen {
		out = append(out, []byte(k))
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

func buildKeyFilter(t *testing.T, keys [][]byte) *KeyFilter {
	t.Helper()
	var kb keyFilterBuilder
	for _, k := range keys {
		kb.add(k)
	}
	f, err := kb.finish(DataFileMeta{FileName: "f", RowCount: int64(len(keys)), FileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func hashesOf(keys [][]byte) []uint64 {
	out := make([]uint64, len(keys))
	for i, k := range keys {
		out[i] = keyHash(k)
	}
	return out
}

// TestKeyFilterHoldsEveryKey: a filter lets every key of its file pass,
// alone or among absent keys, whatever segment it falls in, and rules out
// most absent keys.
func TestKeyFilterHoldsEveryKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, keyFilterSegmentRows - 1, keyFilterSegmentRows, keyFilterSegmentRows + 1, 5000} {
		t.Run(fmt.Sprintf("rows=%d", n), func(t *testing.T) {
			all := randomSortedKeys(rng, 2*n+2000)
			var held, absent [][]byte
			for i, k := range all {
				if i%2 == 0 && len(held) < n {
					held = append(held, k)
				} else {
					absent = append(absent, k)
				}
			}
			f := buildKeyFilter(t, held)
			if got := f.mayHold(held, hashesOf(held), nil); len(got) != len(held) {
				t.Fatalf("%d of %d held keys pass", len(got), len(held))
			}
			// Sparse keys skip segments and land on their first keys.
			for _, stride := range []int{keyFilterSegmentRows, 2 * keyFilterSegmentRows, 3*keyFilterSegmentRows - 1} {
				var sparse [][]byte
				for i := 0; i < len(held); i += stride {
					sparse = append(sparse, held[i])
				}
				if got := f.mayHold(sparse, hashesOf(sparse), nil); len(got) != len(sparse) {
					t.Fatalf("stride %d: %d of %d held keys pass", stride, len(got), len(sparse))
				}
			}
			// Mixed: every held key passes at its index.
			passed := map[int32]bool{}
			for _, i := range f.mayHold(all, hashesOf(all), nil) {
				passed[i] = true
			}
			fp := 0
			for i, k := range all {
				isHeld := i%2 == 0 && i/2 < n
				if isHeld && !passed[int32(i)] {
					t.Fatalf("held key %x ruled out among others", k)
				}
				if !isHeld && passed[int32(i)] {
					fp++
				}
			}
			if rate := float64(fp) / float64(len(absent)); rate > 0.03 {
				t.Fatalf("%.3f of absent keys pass, want about 0.005", rate)
			}
		})
	}
}

func TestKeyFilterBuilderChecks(t *testing.T) {
	var kb keyFilterBuilder
	for i := keyFilterSegmentRows; i > 0; i-- {
		kb.add([]byte{byte(i >> 8), byte(i)}) // within a segment, the order is not checked
	}
	kb.add([]byte{0, 0}) // the next fence is below the first
	if _, err := kb.finish(DataFileMeta{FileName: "f", RowCount: keyFilterSegmentRows + 1}); err == nil || !strings.Contains(err.Error(), "ascending") {
		t.Fatalf("keys out of order: %v", err)
	}
	kb.add([]byte("a"))
	if _, err := kb.finish(DataFileMeta{FileName: "f", RowCount: 2}); err == nil || !strings.Contains(err.Error(), "1 keys for 2 rows") {
		t.Fatalf("a row missing: %v", err)
	}
	// The failed builds left nothing behind.
	kb.add([]byte("a"))
	kb.add([]byte("b"))
	if _, err := kb.finish(DataFileMeta{FileName: "f", RowCount: 2}); err != nil {
		t.Fatal(err)
	}
}

// kvFiles are two views of one bucket directory of kvSchema: one keeping
// key filters, one without.
func kvFiles(t *testing.T) (filtered, plain *DataBucketFiles) {
	t.Helper()
	dir := path.Join(t.TempDir(), "bucket-0")
	n := 0
	opts := BucketFilesOptions{TargetFileSize: 1 << 30, NewFileName: func() string { n++; return fmt.Sprintf("out-%d.parquet", n) }}
	plain, err := NewDataBucketFiles(NewLocalFileIO(), dir, kvSchema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.KeyFilters = NewKeyFilters()
	filtered, err = NewDataBucketFiles(NewLocalFileIO(), dir, kvSchema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return filtered, plain
}

// rewriteTo copies every row of f into new files at level through the
// compaction writer of files.
func rewriteTo(t *testing.T, files *DataBucketFiles, f DataFileMeta, level int, rollEvery int) []DataFileMeta {
	t.Helper()
	it, err := files.Open(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	w, err := files.NewWriter(level)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; it.Next(); n++ {
		if rollEvery > 0 && n > 0 && n%rollEvery == 0 {
			if err := w.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	out, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLookupWithKeyFilters fails if a key filter wrongly rules a key out:
// over levels whose files got their filters each way (written by the
// compaction writer, read whole by ReadKeys, built on first lookup), with
// rows deleted here and there, random batches of present and absent keys
// find exactly the rows a lookup without filters finds.
func TestLookupWithKeyFilters(t *testing.T) {
	filtered, plain := kvFiles(t)
	// Level 1: written by the compaction writer, rolled into 3 files.
	src1 := writeKVRange(t, filtered, "src1.parquet", 0, 0, 6, 3000, 100_000)
	l1 := rewriteTo(t, filtered, src1, 1, 1000)
	// Level 2: its filter made by a read of all its keys.
	l2 := writeKVRange(t, filtered, "l2.parquet", 2, 1, 4, 4000, 50_000)
	if err := filtered.ReadKeys(l2, nil, func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	// Level 3: no filter until its first lookup.
	l3 := writeKVRange(t, filtered, "l3.parquet", 3, 0, 1, 20_000, 0)
	if got := filtered.opts.KeyFilters.Len(); got != len(l1)+1 {
		t.Fatalf("%d filters before any lookup, want %d (the writer's and ReadKeys')", got, len(l1)+1)
	}
	l, err := NewLevels(NewKeyComparator([]DataType{Int().NotNull()}), append(slices.Clone(l1), l2, l3), 4)
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{}
	for p := int64(0); p < 20_000; p += 7 {
		dvs.Add(l3.FileName, p)
	}
	for p := int64(0); p < 1000; p += 5 {
		dvs.Add(l1[1].FileName, p)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		var keys [][]byte
		for k := int32(rng.IntN(50)); k < 30_000; k += 1 + int32(rng.IntN(40)) {
			keys = append(keys, AppendKeyDatums(nil, []DataType{Int().NotNull()}, []Datum{IntDatum(int64(k))}))
		}
		want, err := LookupSuperseded(l, 0, keys, dvs, plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LookupSuperseded(l, 0, keys, dvs, filtered)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("round %d: with filters %s, without %s", round, dvString(got), dvString(want))
		}
		if round == 0 && len(want) != len(l1)+2 {
			t.Fatalf("the keys found rows in %d files, want %d (every file)", len(want), len(l1)+2)
		}
	}
	if got := filtered.opts.KeyFilters.Len(); got != len(l1)+2 {
		t.Fatalf("%d filters after the lookups, want %d", got, len(l1)+2)
	}
}

// TestKeyFilterOfAnotherFileIsNotUsed: a filter kept under a name is used
// only for a file of the row count and size it was built from; a file of
// other content under that name gets its own.
func TestKeyFilterOfAnotherFileIsNotUsed(t *testing.T) {
	filtered, _ := kvFiles(t)
	f := writeKVRange(t, filtered, "f.parquet", 1, 0, 2, 3000, 0)
	other := buildKeyFilter(t, [][]byte{[]byte("x")})
	filtered.opts.KeyFilters.put(f.FileName, other)
	flt, err := filtered.KeyFilter(f)
	if err != nil {
		t.Fatal(err)
	}
	if flt == other {
		t.Fatal("the filter of another file was used")
	}
	keys := [][]byte{AppendKeyDatums(nil, []DataType{Int().NotNull()}, []Datum{IntDatum(1000)})}
	if may := flt.mayHold(keys, hashesOf(keys), nil); len(may) != 1 {
		t.Fatal("the rebuilt filter rules out a key of the file")
	}
	filtered.opts.KeyFilters.Retain(func(string) bool { return false })
	if filtered.opts.KeyFilters.Len() != 0 {
		t.Fatal("Retain kept a rejected filter")
	}
}

// Keys of state tables are structured: a key group and ids that count up,
// differing from one another in a few low bits. The hash must spread them
// as well as random keys: a filter of such keys rules out all but about
// one in 200 absent keys of the same shape, at every key width.
func TestKeyFilterRateOnCountingKeys(t *testing.T) {
	types := [][]DataType{
		{Int().NotNull()},
		{Int().NotNull(), BigInt().NotNull()},
		{Int().NotNull(), BigInt().NotNull(), BigInt().NotNull()},
		{Int().NotNull(), BigInt().NotNull(), String().NotNull()},
	}
	for _, ts := range types {
		t.Run(fmt.Sprintf("columns=%d", len(ts)), func(t *testing.T) {
			key := func(i int64) []byte {
				ds := []Datum{IntDatum(i >> 12), IntDatum(i * 2), IntDatum(i & 7), BytesDatum(fmt.Appendf(nil, "u%d", i*2))}
				if ts[len(ts)-1].Root == TypeString {
					ds[2] = ds[3]
				}
				if len(ts) == 1 {
					ds[0] = IntDatum(i * 2)
				}
				return AppendKeyDatums(nil, ts, ds[:len(ts)])
			}
			const n = 50_000
			var held, absent [][]byte
			for i := range int64(n) {
				held = append(held, key(i))
			}
			f := buildKeyFilter(t, held)
			for i := range int64(n) {
				k := key(i)
				k[len(k)-1] ^= 1 // the next id up or down: absent
				absent = append(absent, k)
			}
			// Checked one at a time: each in the segment its order gives.
			fp := 0
			for _, k := range absent {
				fp += len(f.mayHold([][]byte{k}, hashesOf([][]byte{k}), nil))
			}
			if rate := float64(fp) / n; rate > 0.012 {
				t.Fatalf("%.4f of absent keys pass, want about 0.005", rate)
			}
		})
	}
}

// TestKeyFilterMayHoldMatchesKeyByKey: checking a batch gives, key for key,
// what checking each key alone in the segment its fence puts it in gives,
// for batches denser and sparser than the segments, and reaching past both
// ends of the file.
func TestKeyFilterMayHoldMatchesKeyByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	held := randomSortedKeys(rng, 5*keyFilterSegmentRows+77)
	f := buildKeyFilter(t, held)
	alone := func(k []byte) bool {
		s := 0
		for s+1 < len(f.fences) && bytes.Compare(k, f.fences[s+1]) >= 0 {
			s++
		}
		return hasKeyBits(f.blocks[f.starts[s]:f.starts[s+1]], keyHash(k))
	}
	for _, n := range []int{0, 1, 3, 50, 2000, 40000} {
		keys := randomSortedKeys(rng, n)
		if n > 3 {
			// Some held keys among them: fences themselves included.
			keys = append(keys, held[0], held[keyFilterSegmentRows], held[len(held)-1])
			slices.SortFunc(keys, bytes.Compare)
			keys = slices.CompactFunc(keys, func(a, b []byte) bool { return bytes.Equal(a, b) })
		}
		var want []int32
		for i, k := range keys {
			if alone(k) {
				want = append(want, int32(i))
			}
		}
		if got := f.mayHold(keys, hashesOf(keys), nil); !slices.Equal(got, want) {
			t.Fatalf("%d keys: batch passes %d keys, one by one %d (%v vs %v)", len(keys), len(got), len(want), got, want)
		}
	}
}

func TestGallop(t *testing.T) {
	for n := 0; n < 70; n++ {
		for want := 0; want <= n; want++ {
			calls := 0
			got := gallop(n, func(j int) bool {
				calls++
				if j < 0 || j >= n {
					t.Fatalf("n %d: index %d asked", n, j)
				}
				return j < want
			})
			if got != want {
				t.Fatalf("gallop(%d) with %d holding = %d", n, want, got)
			}
			if limit := 2*bits.Len(uint(want)) + 2; calls > limit {
				t.Fatalf("gallop(%d) with %d holding: %d calls, more than %d", n, want, calls, limit)
			}
		}
	}
}
