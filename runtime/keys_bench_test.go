package runtime

import (
	"testing"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// BenchmarkDistinctKeys gathers batches of 16,384 records by two integer
// columns, mostly distinct as q18's (bidder, auction) pairs are, and
// reports ns per record, wall and CPU of the process.
func BenchmarkDistinctKeys(b *testing.B) {
	const n = 16384
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Kind: Insert, Row: Row{subtask.Int(int64(i % 9000)), subtask.Int(int64(i*7919) % 12000), subtask.Str("x")}}
	}
	d := newDistinctKeys(keySpec{cols: []int{1, 0}, types: []table.DataType{table.BigInt().NotNull(), table.BigInt().NotNull()}})
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if _, _, err := d.of(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*n), "cpu-ns/record")
}
