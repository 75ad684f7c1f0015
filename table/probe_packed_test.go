package table

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func intVec(t DataType, vals []int64) *colVec {
	v := newColVec(t)
	for _, x := range vals {
		if v.width == 4 {
			v.fixed = binary.LittleEndian.AppendUint32(v.fixed, uint32(int32(x)))
		} else {
			v.fixed = binary.LittleEndian.AppendUint64(v.fixed, uint64(x))
		}
		v.n++
	}
	return v
}

// A packed key page finds what a search of the decoded values finds, for
// keys on, between, below and above its rows, with 2- and 4-byte offsets,
// negative values and values at the type's ends; pages that do not pack
// (unsorted, nullable, a block wider than 32 bits) are refused.
func TestPackedKeysSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		t     DataType
		gap   int64
		start int64
		width int
	}{
		{BigInt().NotNull(), 128, 0, 2},
		{BigInt().NotNull(), 5000, -1 << 40, 2}, // in 16-row blocks
		{BigInt().NotNull(), 50000, -1 << 40, 4},
		{BigInt().NotNull(), 3, math.MaxInt64 - 4000, 2},
		{Int().NotNull(), 1000, -300000, 2},
		{Int().NotNull(), 60000, math.MinInt32, 4},
		{Timestamp(3).NotNull(), 1, 0, 2},
		{Date().NotNull(), 2, 0, 2},
	}
	for _, c := range cases {
		for _, rows := range []int{1, 63, 64, 65, 1000, 1024} {
			vals := make([]int64, rows)
			x := c.start
			for i := range vals {
				vals[i] = x
				x += 1 + r.Int64N(c.gap)
			}
			if c.t.Root == TypeInt && vals[rows-1] > math.MaxInt32 {
				continue
			}
			pk := packKeys([]*colVec{intVec(c.t, vals)}, []DataType{c.t}, rows)
			if pk == nil {
				t.Fatalf("%v gap %d rows %d: did not pack", c.t, c.gap, rows)
			}
			if rows >= 64 && pk.width != c.width {
				t.Errorf("%v gap %d: width %d, want %d", c.t, c.gap, pk.width, c.width)
			}
			probes := []int64{vals[0] - 1, vals[rows-1] + 1, vals[0], vals[rows-1]}
			for range 300 {
				i := r.IntN(rows)
				probes = append(probes, vals[i], vals[i]+1, vals[i]-1)
			}
			for _, w := range probes {
				if c.t.Root == TypeInt && (w > math.MaxInt32 || w < math.MinInt32) || w < c.start && c.start == math.MinInt32 {
					continue
				}
				wantR := sort.Search(rows, func(i int) bool { return vals[i] >= w })
				wantEq := wantR < rows && vals[wantR] == w
				gotR, gotEq := pk.search([]int64{w})
				if gotR != wantR || gotEq != wantEq {
					t.Fatalf("%v rows %d: search %d = (%d, %v), want (%d, %v)", c.t, rows, w, gotR, gotEq, wantR, wantEq)
				}
				enc := (&keyPage{packed: pk}).appendKey(nil, []DataType{c.t}, wantR%rows)
				dec := intVec(c.t, vals).appendKey(nil, c.t, wantR%rows)
				if string(enc) != string(dec) {
					t.Fatalf("%v: row key %x, decoded %x", c.t, enc, dec)
				}
				if got := []int64{0}; !pk.want(dec, got) || got[0] != vals[wantR%rows] {
					t.Fatalf("%v: want(%x) = %d", c.t, dec, got)
				}
			}
		}
	}
	one := func(t DataType, vals ...int64) *packedKeys {
		return packKeys([]*colVec{intVec(t, vals)}, []DataType{t}, len(vals))
	}
	if one(BigInt().NotNull(), 1, 3, 2) != nil {
		t.Error("unsorted values packed")
	}
	if one(BigInt().NotNull(), 0, 1<<33) != nil {
		t.Error("a block wider than 32 bits packed")
	}
	if one(BigInt(), 0, 1) != nil {
		t.Error("a nullable field packed")
	}
	if one(Double().NotNull(), 0, 1) != nil {
		t.Error("a double packed")
	}
}

// A page whose leading key field changes within it (a key group boundary)
// packs in segments, without slack in its slices, and finds what a search
// of the encoded keys finds;
// leading fields that go down, or a last field that does not ascend within
// a segment, do not pack.
func TestPackedKeysSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	types := []DataType{Int().NotNull(), BigInt().NotNull()}
	for _, rows := range []int{1, 2, 64, 65, 300, 1024, 3000} {
		var kgs, keys []int64
		kg, key := int64(-3), int64(1<<40)
		for range rows {
			if r.IntN(50) == 0 {
				kg += 1 + r.Int64N(3)
				key = r.Int64N(1000) - 500 // keys restart lower in the next group
			}
			kgs, keys = append(kgs, kg), append(keys, key)
			key += 1 + r.Int64N(300)
		}
		vecs := []*colVec{intVec(types[0], kgs), intVec(types[1], keys)}
		pk := packKeys(vecs, types, rows)
		if pk == nil {
			t.Fatalf("rows %d: did not pack", rows)
		}
		if exact := 8*len(pk.lead) + 4*len(pk.segs) + 4*len(pk.blocks) + 8*len(pk.bases) + len(pk.offs) + cap(pk.last) + 120; pk.memSize() != exact {
			t.Fatalf("rows %d: packed page holds %d bytes, %d without slack", rows, pk.memSize(), exact)
		}
		encoded := make([][]byte, rows)
		for i := range rows {
			encoded[i] = vecs[1].appendKey(vecs[0].appendKey(nil, types[0], i), types[1], i)
			if got := pk.appendKey(nil, i); string(got) != string(encoded[i]) {
				t.Fatalf("rows %d: row %d key %x, want %x", rows, i, got, encoded[i])
			}
		}
		var probes [][2]int64
		for range 400 {
			i := r.IntN(rows)
			for _, d := range [][2]int64{{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {0, 1 << 20}} {
				probes = append(probes, [2]int64{kgs[i] + d[0], keys[i] + d[1]})
			}
		}
		probes = append(probes, [2]int64{kgs[0] - 1, 0}, [2]int64{kgs[rows-1] + 1, 0})
		for _, p := range probes {
			enc := appendIntKey(appendIntKey(nil, types[0], p[0]), types[1], p[1])
			want := sort.Search(rows, func(i int) bool { return string(encoded[i]) >= string(enc) })
			wantEq := want < rows && string(encoded[want]) == string(enc)
			w := make([]int64, 2)
			if !pk.want(enc, w) || w[0] != p[0] || w[1] != p[1] {
				t.Fatalf("want(%x) = %v", enc, w)
			}
			if got, eq := pk.search(w); got != want || eq != wantEq {
				t.Fatalf("rows %d: search %v = (%d, %v), want (%d, %v)", rows, p, got, eq, want, wantEq)
			}
		}
	}
	down := []*colVec{intVec(types[0], []int64{2, 1}), intVec(types[1], []int64{0, 5})}
	if packKeys(down, types, 2) != nil {
		t.Error("a leading field going down packed")
	}
	flat := []*colVec{intVec(types[0], []int64{1, 1}), intVec(types[1], []int64{5, 5})}
	if packKeys(flat, types, 2) != nil {
		t.Error("a repeated key packed")
	}
}

// BenchmarkPackKeys times packing a 1,024-row key page of the shapes state
// tables have after their key group: one BIGINT field; two BIGINT fields
// with about 25 rows per leading value (a pair key); and a key group
// changing within the page, unpinned. It reports the process's CPU time
// per page too (cpu-ns/op), steadier than wall time on a loaded machine.
func BenchmarkPackKeys(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows = 1024
	big := BigInt().NotNull()
	one := make([]int64, rows)
	for i, x := 0, int64(1<<33); i < rows; i++ {
		one[i], x = x, x+1+r.Int64N(300)
	}
	lead, last := make([]int64, rows), make([]int64, rows)
	for i, a, x := 0, int64(5000), int64(0); i < rows; i++ {
		if r.IntN(25) == 0 {
			a += 1 + r.Int64N(40)
			x = 100_000 + r.Int64N(5000)
		}
		lead[i], last[i], x = a, x, x+1+r.Int64N(100)
	}
	kgs, keys := make([]int64, rows), make([]int64, rows)
	for i, kg, x := 0, int64(7), int64(0); i < rows; i++ {
		if i == rows/2 {
			kg, x = kg+1, r.Int64N(1000)
		}
		kgs[i], keys[i], x = kg, x, x+1+r.Int64N(300)
	}
	shapes := []struct {
		name  string
		types []DataType
		vecs  []*colVec
	}{
		{"bigint", []DataType{big}, []*colVec{intVec(big, one)}},
		{"pair", []DataType{big, big}, []*colVec{intVec(big, lead), intVec(big, last)}},
		{"kg-bigint", []DataType{Int().NotNull(), big}, []*colVec{intVec(Int().NotNull(), kgs), intVec(big, keys)}},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for range b.N {
				if packKeys(s.vecs, s.types, rows) == nil {
					b.Fatal("did not pack")
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
