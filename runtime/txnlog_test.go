package runtime

import (
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// A logged transaction is written once, survives a reopen of the directory,
// and replays into a changelog table; a sink name with dashes and slashes
// round-trips through the file name.
func TestTxnLog(t *testing.T) {
	dir := t.TempDir()
	log, err := OpenTxnLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	row := func(v int64) Record { return Record{Kind: Insert, Row: Row{subtask.Int(v)}} }
	txns := []*Txn{
		{TxnID: TxnID{Sink: "out-1/a", Writer: 1, Checkpoint: 3}, Changes: []Record{row(1), row(2)}},
		{TxnID: TxnID{Sink: "out-1/a", Writer: 0, Checkpoint: 2}, Changes: []Record{row(3)}},
	}
	for _, tx := range append(txns, txns[0]) {
		if err := log.Commit(tx); err != nil {
			t.Fatal(err)
		}
	}
	again, err := OpenTxnLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	table := NewChangelogTable()
	n, err := again.Replay(table)
	if err != nil || n != 2 {
		t.Fatalf("replayed %d, %v; want 2", n, err)
	}
	rows, err := table.Rows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("rows %v, want 3", rows)
	}
}
