package runtime

import (
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// BenchmarkGroupsBuild groups batches of 16,384 records by two integer
// columns, mostly distinct as q18's (bidder, auction) pairs are, and
// reports ns per record, wall and CPU of the process.
func BenchmarkGroupsBuild(b *testing.B) {
	const n = 16384
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Kind: Insert, Row: Row{subtask.Int(int64(i % 9000)), subtask.Int(int64(i*7919) % 12000), subtask.Str("x")}}
	}
	var g groups
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		g.build(recs, []int{1, 0})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*n), "cpu-ns/record")
}
