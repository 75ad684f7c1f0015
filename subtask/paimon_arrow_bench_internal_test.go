package subtask

import (
	"fmt"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkWriteRecord builds the Arrow record of a flush of 64K map rows
// (a join side's shape: a BIGINT key, a BIGINT entry key, four values of
// which one a string), a tenth of them tombstones.
func BenchmarkWriteRecord(b *testing.B) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "price", Type: table.BigInt()}, {Name: "at", Type: table.BigInt()},
			{Name: "url", Type: table.String()}, {Name: "count", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := newPaimonCodec(l)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 16
	rows := make([]mutation, n)
	for i := range rows {
		k := int64(i / 8)
		key := l.appendSub(l.AppendKey(nil, Key{Group: int32(k % 128), Cols: Row{Int(k)}}), Row{Int(int64(i))})
		rows[i] = mutation{key: string(key), delete: i%10 == 9,
			vals: Row{Int(int64(i) * 7), Int(1_700_000_000_000 + int64(i)), Str(fmt.Sprintf("https://example.com/item/%d", i)), Int(1)}}
	}
	sortMutations(rows)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec, _, err := c.writeRecord(rows)
		if err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
