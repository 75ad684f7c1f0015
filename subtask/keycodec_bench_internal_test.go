package subtask

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/lakestate/lakestate/table"
)

func benchKeyColumns(n int) []Column {
	cols := make([]Column, n)
	for i := range cols {
		cols[i] = Column{Name: fmt.Sprintf("c%d", i), Type: table.BigInt().NotNull()}
	}
	return cols
}

// BenchmarkAppendKey encodes keys of one and two BIGINT columns, against
// the general per-datum encoding the integer columns skip.
func BenchmarkAppendKey(b *testing.B) {
	for _, cols := range []int{1, 2} {
		l, err := newLayout(Layout{Name: "s", Kind: KindValue, Key: benchKeyColumns(cols), Value: []Column{{Name: "v", Type: table.BigInt()}}})
		if err != nil {
			b.Fatal(err)
		}
		keys := make([]Key, 1024)
		for i := range keys {
			r := make(Row, cols)
			for j := range r {
				r[j] = Int(int64(i*7919 + j))
			}
			keys[i] = Key{Group: int32(i % 128), Cols: r}
		}
		b.Run(fmt.Sprintf("cols=%d", cols), func(b *testing.B) {
			var enc []byte
			var inKey, inDatums time.Duration
			for b.Loop() {
				t0 := time.Now()
				for _, k := range keys {
					enc = l.AppendKey(enc[:0], k)
				}
				t1 := time.Now()
				for _, k := range keys {
					enc = binary.BigEndian.AppendUint32(enc[:0], uint32(k.Group)^0x80000000)
					for i, c := range l.Key {
						enc = appendKeyDatum(enc, c.Type, k.Cols[i])
					}
				}
				inKey, inDatums = inKey+t1.Sub(t0), inDatums+time.Since(t1)
			}
			n := float64(b.N * len(keys))
			b.ReportMetric(float64(inKey.Nanoseconds())/n, "appendkey-ns/key")
			b.ReportMetric(float64(inDatums.Nanoseconds())/n, "datums-ns/key")
		})
	}
}
