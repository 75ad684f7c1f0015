package runtime

import (
	"bytes"
	"testing"

	"github.com/lakestate/lakestate/barrier"
)

// A sink's snapshot in pieces is the count of its pending transactions and
// one piece per transaction, named by its writer and checkpoint: head and
// pieces back to back are the bytes Snapshot gives, which a restore
// decodes. A piece's bytes are the transaction's own and stay the same in
// every later snapshot that still holds it.
func TestSinkSnapshotPieces(t *testing.T) {
	s := &sinkOp{ctx: &OperatorContext{Task: TaskID{Operator: "out", Subtask: 1}}}
	changes := sampleTxns()[0].Changes
	snap := func(n int64) ([]byte, []barrier.ExtraPiece) {
		t.Helper()
		head, pieces, err := s.snapshotPieces(n)
		if err != nil {
			t.Fatal(err)
		}
		all := bytes.Join(head, nil)
		for _, p := range pieces {
			if p.Owner != extrasKey {
				t.Fatalf("piece %q of owner %q", p.Name, p.Owner)
			}
			all = append(all, bytes.Join(p.Data, nil)...)
		}
		joined, err := s.Snapshot(n) // nothing staged since: the same transactions
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(all, bytes.Join(joined, nil)) {
			t.Fatalf("checkpoint %d: head and pieces differ from the snapshot", n)
		}
		txns, err := decodeTxns(all, "out")
		if err != nil || len(txns) != len(pieces) {
			t.Fatalf("checkpoint %d: %d transactions for %d pieces: %v", n, len(txns), len(pieces), err)
		}
		return all, pieces
	}
	if err := s.Process(0, changes, nil); err != nil {
		t.Fatal(err)
	}
	_, first := snap(3)
	if len(first) != 1 || first[0].Name != "txn-1-3" {
		t.Fatalf("pieces %+v, want txn-1-3", first)
	}
	firstBytes := bytes.Join(first[0].Data, nil)
	if err := s.Process(0, changes[:2], nil); err != nil {
		t.Fatal(err)
	}
	_, second := snap(5)
	if len(second) != 2 || second[0].Name != "txn-1-3" || second[1].Name != "txn-1-5" {
		t.Fatalf("pieces %+v, want txn-1-3 and txn-1-5", second)
	}
	if !bytes.Equal(bytes.Join(second[0].Data, nil), firstBytes) || !bytes.Equal(bytes.Join(first[0].Data, nil), firstBytes) {
		t.Fatal("a pending transaction's piece changed")
	}
	s.committing = true
	if err := s.Receive(&commitDone{n: 2}); err != nil {
		t.Fatal(err)
	}
	if all, none := snap(6); len(none) != 0 || !bytes.Equal(all, []byte{0}) {
		t.Fatalf("nothing pending: %q and %d pieces", all, len(none))
	}
}
