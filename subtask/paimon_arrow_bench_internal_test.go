package subtask

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkWriteRecord builds the Arrow record of a flush of 64K map rows
// (a join side's shape: a BIGINT key, a BIGINT entry key, four values of
// which one a string), a tenth of them tombstones. In "dense" the rows and
// keys were allocated in key order, so a flush walks memory forward; in
// "scattered" they were allocated in random order among other objects, as
// an operator's writes leave them, so each row costs the flush cache misses.
func BenchmarkWriteRecord(b *testing.B) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "price", Type: table.BigInt()}, {Name: "at", Type: table.BigInt()},
			{Name: "url", Type: table.String()}, {Name: "count", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 16
	mutationAt := func(i int) mutation {
		k := int64(i / 8)
		key := l.appendSub(l.AppendKey(nil, Key{Group: int32(k % 128), Cols: Row{Int(k)}}), Row{Int(int64(i))})
		return mutation{key: string(key), delete: i%10 == 9,
			vals: Row{Int(int64(i) * 7), Int(1_700_000_000_000 + int64(i)), Str(fmt.Sprintf("https://example.com/item/%d", i)), Int(1)}}
	}
	for _, shape := range []string{"dense", "scattered"} {
		rows := make([]mutation, n)
		var keep [][]byte
		if shape == "dense" {
			for i := range rows {
				rows[i] = mutationAt(i)
			}
		} else {
			rng := rand.New(rand.NewPCG(1, 2))
			for _, i := range rng.Perm(n) {
				rows[i] = mutationAt(i)
				keep = append(keep, make([]byte, 64+rng.IntN(1024)))
			}
		}
		sortMutations(rows)
		b.Run(shape, func(b *testing.B) {
			c, err := newPaimonCodec(l)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				rec, _, err := c.writeRecord(rows)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
		_ = keep
	}
}
