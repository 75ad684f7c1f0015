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
		{BigInt().NotNull(), 5000, -1 << 40, 4},
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
			pk := packKeys(intVec(c.t, vals), c.t, rows)
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
				gotR, gotEq := pk.search(w)
				if gotR != wantR || gotEq != wantEq {
					t.Fatalf("%v rows %d: search %d = (%d, %v), want (%d, %v)", c.t, rows, w, gotR, gotEq, wantR, wantEq)
				}
				enc := (&keyPage{packed: pk}).appendKey(nil, []DataType{c.t}, wantR%rows)
				dec := intVec(c.t, vals).appendKey(nil, c.t, wantR%rows)
				if string(enc) != string(dec) {
					t.Fatalf("%v: row key %x, decoded %x", c.t, enc, dec)
				}
				if got, ok := pk.want(dec); !ok || got != vals[wantR%rows] {
					t.Fatalf("%v: want(%x) = %d, %v", c.t, dec, got, ok)
				}
			}
		}
	}
	if pk := packKeys(intVec(BigInt().NotNull(), []int64{1, 3, 2}), BigInt().NotNull(), 3); pk != nil {
		t.Error("unsorted values packed")
	}
	if pk := packKeys(intVec(BigInt().NotNull(), []int64{0, 1 << 33}), BigInt().NotNull(), 2); pk != nil {
		t.Error("a block wider than 32 bits packed")
	}
	if pk := packKeys(intVec(BigInt(), []int64{0, 1}), BigInt(), 2); pk != nil {
		t.Error("a nullable field packed")
	}
	if pk := packKeys(intVec(Double().NotNull(), []int64{0, 1}), Double().NotNull(), 2); pk != nil {
		t.Error("a double packed")
	}
}
