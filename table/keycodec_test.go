package table

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Encoded keys sort like Paimon's comparator: field by field, nulls first,
// signed integers, strings as unsigned bytes with prefixes first.
func TestKeyEncodingOrder(t *testing.T) {
	types := []DataType{Int(), String().NotNull(), Double().NotNull()}
	keys := [][]Datum{
		{NullDatum, BytesDatum([]byte("z")), FloatDatum(9)},
		{IntDatum(-5), BytesDatum([]byte("")), FloatDatum(0)},
		{IntDatum(-5), BytesDatum([]byte("a")), FloatDatum(-1)},
		{IntDatum(-5), BytesDatum([]byte("a")), FloatDatum(2)},
		{IntDatum(-5), BytesDatum([]byte("a\x00")), FloatDatum(-3)},
		{IntDatum(-5), BytesDatum([]byte("a\x01")), FloatDatum(-3)},
		{IntDatum(-5), BytesDatum([]byte("ab")), FloatDatum(-3)},
		{IntDatum(-5), BytesDatum([]byte{0xC3, 0xA9}), FloatDatum(-3)},
		{IntDatum(0), BytesDatum([]byte("a")), FloatDatum(-3)},
		{IntDatum(1 << 30), BytesDatum([]byte("a")), FloatDatum(-3)},
	}
	for i := 1; i < len(keys); i++ {
		if c := CompareKeyDatums(types, keys[i-1], keys[i]); c >= 0 {
			t.Errorf("key %d vs %d: compare %d, want < 0", i-1, i, c)
		}
	}
}

// The columnar Arrow encoder and the datum encoder agree.
func TestKeyBatchMatchesDatumEncoding(t *testing.T) {
	mem := memory.NewGoAllocator()
	types := []DataType{Int().NotNull(), String(), BigInt().NotNull()}
	ib := array.NewInt32Builder(mem)
	sb := array.NewStringBuilder(mem)
	lb := array.NewInt64Builder(mem)
	r := rand.New(rand.NewPCG(1, 2))
	var want [][]byte
	for i := 0; i < 500; i++ {
		kg, v := r.Int32N(10)-5, r.Int64()
		s := []byte{byte(r.IntN(3)), 'x'}[:r.IntN(3)]
		ib.Append(kg)
		lb.Append(v)
		d := BytesDatum(s)
		if r.IntN(10) == 0 {
			sb.AppendNull()
			d = NullDatum
		} else {
			sb.Append(string(s))
		}
		want = append(want, AppendKeyDatums(nil, types, []Datum{IntDatum(int64(kg)), d, IntDatum(v)}))
	}
	cols := []arrow.Array{ib.NewArray(), sb.NewArray(), lb.NewArray()}
	var kb KeyBatch
	if err := kb.EncodeArrow(cols, types); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(kb.Key(i), want[i]) {
			t.Fatalf("row %d: %x want %x", i, kb.Key(i), want[i])
		}
	}
	sorted := slices.Clone(want)
	slices.SortFunc(sorted, bytes.Compare)
	for i := 1; i < len(sorted); i++ {
		if bytes.Compare(sorted[i-1], sorted[i]) > 0 {
			t.Fatal("sort broken")
		}
	}
}
