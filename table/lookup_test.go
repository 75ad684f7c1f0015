package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestLookupSuperseded(t *testing.T) {
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("l2", 2, ins("c", 7, ""), ins("e", 7, "")),
		b.file("l3a", 3, ins("a", 5, ""), ins("c", 5, "")),
		b.file("l3b", 3, ins("g", 5, ""), ins("k", 5, "")),
		b.file("l5", 5, ins("a", 1, ""), ins("b", 1, ""), ins("c", 1, ""), ins("g", 1, ""), ins("z", 1, "")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(ks ...string) [][]byte {
		var out [][]byte
		for _, k := range ks {
			out = append(out, []byte(k))
		}
		return out
	}
	tests := []struct {
		name  string
		level int
		keys  [][]byte
		dvs   func() DeletionVectors
		want  string
	}{
		{name: "no keys", level: 1, want: ""},
		{name: "first level holding the key wins", level: 1, keys: keys("c"), want: "l2{0}"},
		{name: "below level 2", level: 2, keys: keys("a", "c", "g"), want: "l3a{0,1} l3b{0}"},
		{name: "keys between files fall through", level: 2, keys: keys("b", "d", "z"), want: "l5{1,4}"},
		{name: "nothing below the max level", level: 5, keys: keys("a"), want: ""},
		{name: "past an empty level to the deepest", level: 3, keys: keys("a", "d", "z"), want: "l5{0,4}"},
		{
			name: "a deleted row is not found: the lookup goes deeper", level: 2, keys: keys("a", "g"),
			dvs:  func() DeletionVectors { d := DeletionVectors{}; d.Add("l3a", 0); return d },
			want: "l3b{0} l5{0}",
		},
		{
			name: "deleted everywhere: nothing to supersede", level: 2, keys: keys("a"),
			dvs:  func() DeletionVectors { d := DeletionVectors{}; d.Add("l3a", 0); d.Add("l5", 0); return d },
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dvs := DeletionVectors{}
			if tt.dvs != nil {
				dvs = tt.dvs()
			}
			before := dvString(dvs)
			got, err := LookupSuperseded(l, tt.level, tt.keys, dvs, b)
			if err != nil {
				t.Fatal(err)
			}
			if s := dvString(got); s != tt.want {
				t.Fatalf("superseded = %q, want %q", s, tt.want)
			}
			if dvString(dvs) != before {
				t.Fatal("LookupSuperseded changed its input vectors")
			}
		})
	}
	if _, err := LookupSuperseded(l, 1, keys("c", "a"), DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "ascending") {
		t.Fatalf("unsorted keys: err = %v", err)
	}
}

// TestLookupSupersededMatchesModel looks random keys up in random trees
// (levels of one to four files, empty levels, deleted rows) and compares
// with a key-by-key search of the levels: keys found at a level go no
// deeper, keys between files and keys no filter lets pass go on.
func TestLookupSupersededMatchesModel(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := newMemBucket()
		key := func() string { return fmt.Sprintf("k%04d", rng.IntN(300)) }
		var metas []DataFileMeta
		dvs := DeletionVectors{}
		const numLevels = 7
		for lv := int32(1); lv < numLevels; lv++ {
			if rng.IntN(4) == 0 {
				continue // an empty level
			}
			// A run: distinct sorted keys cut into files.
			set := map[string]bool{}
			for range 1 + rng.IntN(120) {
				set[key()] = true
			}
			ks := make([]string, 0, len(set))
			for k := range set {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			pieces := 1 + rng.IntN(4)
			for p := range pieces {
				part := ks[p*len(ks)/pieces : (p+1)*len(ks)/pieces]
				if len(part) == 0 {
					continue
				}
				var rows []memRow
				for _, k := range part {
					rows = append(rows, ins(k, int64(lv), ""))
				}
				name := fmt.Sprintf("l%d-%d", lv, p)
				metas = append(metas, b.file(name, lv, rows...))
				for r := range rows {
					if rng.IntN(8) == 0 {
						dvs.Add(name, int64(r))
					}
				}
			}
		}
		l, err := NewLevels(bytes.Compare, metas, numLevels)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for range rng.IntN(200) {
			set[key()] = true
		}
		var keys [][]byte
		for k := range set {
			keys = append(keys, []byte(k))
		}
		slices.SortFunc(keys, bytes.Compare)
		before := slices.Clone(keys)
		level := rng.IntN(3)
		got, err := LookupSuperseded(l, level, keys, dvs, b)
		if err != nil {
			t.Fatal(err)
		}
		want := DeletionVectors{}
		for _, k := range keys {
		levels:
			for lv := level + 1; lv < numLevels; lv++ {
				for _, f := range l.RunOfLevel(lv).Files {
					for r, row := range b.files[f.FileName] {
						if row.key == string(k) && !dvs.IsDeleted(f.FileName, int64(r)) {
							want.Add(f.FileName, int64(r))
							break levels
						}
					}
				}
			}
		}
		if g, w := dvString(got), dvString(want); g != w {
			t.Fatalf("seed %d: superseded\n%s\nwant\n%s", seed, g, w)
		}
		if !slices.EqualFunc(keys, before, bytes.Equal) {
			t.Fatalf("seed %d: LookupSuperseded changed its keys", seed)
		}
	}
}

// TestMayHoldChecksEachKeyInItsSegment: mayHold, which gallops over keys
// and fences, answers as checking each key in the segment of the last fence
// at or below it (the first segment for a key below every fence) does, for
// dense, sparse and clustered keys.
func TestMayHoldChecksEachKeyInItsSegment(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	all := randomSortedKeys(rng, 40_000)
	var held [][]byte
	for i := 0; i < len(all); i += 4 {
		held = append(held, all[i])
	}
	f := buildKeyFilter(t, held)
	for _, stride := range []int{1, 3, 17, 700, 5000} {
		for _, cluster := range []int{1, 50} {
			var keys [][]byte
			for i := rng.IntN(stride); i < len(all); i += stride * cluster {
				keys = append(keys, all[i:min(len(all), i+cluster)]...)
			}
			var want []int32
			for i, k := range keys {
				s := 0
				for s+1 < len(f.fences) && bytes.Compare(k, f.fences[s+1]) >= 0 {
					s++
				}
				if hasKeyBits(f.blocks[f.starts[s]:f.starts[s+1]], keyHash(k)) {
					want = append(want, int32(i))
				}
			}
			if got := f.mayHold(keys, hashesOf(keys), nil); !slices.Equal(got, want) {
				t.Fatalf("stride %d, cluster %d: %d keys pass, want %d", stride, cluster, len(got), len(want))
			}
		}
	}
}

func TestGallopKeys(t *testing.T) {
	var keys [][]byte
	for i := range 50 {
		keys = append(keys, []byte{byte(2 * i)})
	}
	for from := 0; from <= len(keys); from++ {
		for x := 0; x <= 101; x++ {
			want := max(from, min(len(keys), (x+1)/2))
			got := gallopKeys(keys, from, func(k []byte) bool { return int(k[0]) >= x })
			if got != want {
				t.Fatalf("from %d, first >= %d: %d, want %d", from, x, got, want)
			}
		}
	}
}

func TestKeyBatchDrop(t *testing.T) {
	for _, at := range [][]int{{0}, {4}, {0, 1, 2, 3, 4}, {1, 3}, {0, 4}, {2}} {
		b := keyBatch{hashes: []uint64{10, 11, 12, 13, 14}}
		for i := range 5 {
			b.keys = append(b.keys, []byte{byte(i)})
		}
		b.drop(at)
		var wantKeys [][]byte
		var wantHashes []uint64
		for i := range 5 {
			if !slices.Contains(at, i) {
				wantKeys, wantHashes = append(wantKeys, []byte{byte(i)}), append(wantHashes, uint64(10+i))
			}
		}
		if !slices.EqualFunc(b.keys, wantKeys, bytes.Equal) || !slices.Equal(b.hashes, wantHashes) {
			t.Fatalf("drop %v: %v %v, want %v %v", at, b.keys, b.hashes, wantKeys, wantHashes)
		}
	}
}

func TestFindKeysByScan(t *testing.T) {
	b := newMemBucket()
	f := b.file("f", 1, ins("b", 0, ""), ins("d", 0, ""), ins("f", 0, ""))
	it, _ := b.Open(f, nil)
	got, err := findKeysByScan(it, [][]byte{[]byte("a"), []byte("d"), []byte("e"), []byte("f"), []byte("g")})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{-1, 1, -1, 2, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("positions = %v, want %v", got, want)
		}
	}
}

func TestDeletionVectors(t *testing.T) {
	d := DeletionVectors{}
	if !d.Add("f", 3) || d.Add("f", 3) {
		t.Fatal("Add does not report newness")
	}
	if !d.IsDeleted("f", 3) || d.IsDeleted("f", 4) || d.IsDeleted("g", 3) || d.IsDeleted("f", -1) {
		t.Fatal("IsDeleted is wrong")
	}
	c := d.Clone()
	c.Add("f", 4)
	if d.IsDeleted("f", 4) {
		t.Fatal("Clone shares bitmaps")
	}
	if d.Equal(c) || !d.Equal(d.Clone()) {
		t.Fatal("Equal is wrong")
	}
	other := DeletionVectors{}
	other.Add("f", 3)
	if d.Merge(other) {
		t.Fatal("merging known deletions reports a change")
	}
	other.Add("g", 1)
	if !d.Merge(other) || !d.IsDeleted("g", 1) {
		t.Fatal("merge lost a deletion")
	}
	if !d.Remove("g") || d.Remove("g") {
		t.Fatal("Remove does not report presence")
	}
	empty := DeletionVectors{}
	empty.Add("h", 1)
	empty["h"].Remove(1)
	if !empty.Equal(DeletionVectors{}) {
		t.Fatal("an empty vector is not the same as none")
	}
}
