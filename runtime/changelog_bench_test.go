package runtime

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lakestate/lakestate/subtask"
)

// BenchmarkChangelogCommit commits transactions of 10,000 distinct rows
// shaped like q20's output (seven numbers, eight strings of 6 to 400 bytes)
// to a table that already holds 500,000 rows. It reports ns per change,
// wall and CPU of the process while committing (the collector's included;
// on a shared machine the steadier), and the collector's cycles per
// million changes (building the transactions, untimed, allocates too).
func BenchmarkChangelogCommit(b *testing.B) {
	const perTxn, held = 10_000, 500_000
	txn := func(ck int64) *Txn {
		t := &Txn{TxnID: TxnID{Sink: "out", Checkpoint: ck}}
		for i := range perTxn {
			id := ck*perTxn + int64(i)
			t.Changes = append(t.Changes, Record{Kind: Insert, KeyGroup: -1, Row: Row{
				subtask.Int(id), subtask.Int(id % 977), subtask.Int(id * 7), subtask.Str("Google"),
				subtask.Str("https://www.nexmark.com/abc/def/ghi/item.htm?query=1"), subtask.Int(1e12 + id),
				subtask.Str(strings.Repeat("e", 100+int(id%200))), subtask.Str(fmt.Sprintf("item %d", id)),
				subtask.Str(strings.Repeat("d", 60)), subtask.Int(100), subtask.Int(200), subtask.Int(1e12 + id),
				subtask.Int(1e12 + 2*id), subtask.Int(id % 1000), subtask.Str(strings.Repeat("x", 400)),
			}})
		}
		return &Txn{TxnID: t.TxnID, encoded: [][]byte{encodeTxn(t)}}
	}
	table := NewChangelogTable()
	ck := int64(1)
	for ; ck <= held/perTxn; ck++ {
		if err := table.Commit(txn(ck)); err != nil {
			b.Fatal(err)
		}
	}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	n := 0
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		t := txn(ck)
		ck++
		start := processCPU()
		b.StartTimer()
		if err := table.Commit(t); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - start
		n += perTxn
	}
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/change")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/change")
	b.ReportMetric(float64(after.NumGC-before.NumGC)*1e6/float64(n), "GCs/Mchange")
}

// processCPU is the user and system CPU time the process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
