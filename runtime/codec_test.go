package runtime

import (
	"math"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

func sampleTxns() []*Txn {
	return []*Txn{
		{TxnID: TxnID{Sink: "out", Writer: 1, Checkpoint: 7}, Changes: []Record{
			{Kind: Insert, KeyGroup: -1, Row: Row{subtask.Int(-3), subtask.Str("a"), subtask.Null}},
			{Kind: UpdateBefore, KeyGroup: -1, Row: Row{subtask.Decimal(-1, 5), subtask.Float(2.5)}},
			{Kind: Delete, KeyGroup: -1, Row: Row{}},
			{Kind: UpdateAfter, KeyGroup: -1, Row: Row{subtask.Int(math.MinInt64), subtask.Int(math.MaxInt64), subtask.Int(63), subtask.Int(64),
				subtask.Decimal(math.MinInt64, math.MaxUint64), subtask.Str(strings.Repeat("x", 300)), subtask.Float(math.Inf(-1))}},
		}},
		{TxnID: TxnID{Sink: "out", Writer: 0, Checkpoint: 9}},
	}
}

// Transactions and offsets round-trip exactly, datum for datum.
func TestExtrasRoundTrip(t *testing.T) {
	want := sampleTxns()
	got, err := decodeTxns(encodeTxns(want), "out")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d transactions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].TxnID != want[i].TxnID || len(got[i].Changes) != len(want[i].Changes) {
			t.Fatalf("transaction %d: %+v, want %+v", i, got[i].TxnID, want[i].TxnID)
		}
		for j, c := range want[i].Changes {
			if g := got[i].Changes[j]; g.Kind != c.Kind || !g.Row.Equal(c.Row) {
				t.Fatalf("transaction %d change %d: %v %v, want %v %v", i, j, g.Kind, g.Row, c.Kind, c.Row)
			}
		}
	}
	offs := map[int]int64{0: 5, 3: 1 << 40}
	back, err := decodeOffsets(encodeOffsets(offs))
	if err != nil || len(back) != 2 || back[0] != 5 || back[3] != 1<<40 {
		t.Fatalf("offsets %v, %v", back, err)
	}
	if _, err := mergeOffsets([][]byte{encodeOffsets(map[int]int64{0: 1}), encodeOffsets(map[int]int64{0: 2})}, 1); err == nil {
		t.Fatal("a split recorded twice merged")
	}
	if _, err := mergeOffsets([][]byte{encodeOffsets(map[int]int64{0: 1})}, 2); err == nil {
		t.Fatal("offsets missing a split merged")
	}
}

// Truncated or corrupt extras are errors, never panics.
func TestExtrasCorrupt(t *testing.T) {
	b := encodeTxns(sampleTxns())
	for n := range len(b) {
		if _, err := decodeTxns(b[:n], "out"); err == nil {
			t.Fatalf("transactions truncated to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decodeTxns(append(b, 0), "out"); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func FuzzDecodeTxns(f *testing.F) {
	f.Add(encodeTxns(sampleTxns()))
	f.Add([]byte{})
	f.Add([]byte{1, 0, 1, 1, 9, 1, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		txns, err := decodeTxns(b, "out")
		if err != nil {
			return
		}
		again, err := decodeTxns(encodeTxns(txns), "out")
		if err != nil || len(again) != len(txns) {
			t.Fatalf("re-encoding of decoded transactions: %v", err)
		}
	})
}

func FuzzDecodeOffsets(f *testing.F) {
	f.Add(encodeOffsets(map[int]int64{0: 5, 3: 9}))
	f.Add([]byte{})
	f.Add([]byte{2, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		offs, err := decodeOffsets(b)
		if err != nil {
			return
		}
		again, err := decodeOffsets(encodeOffsets(offs))
		if err != nil || len(again) != len(offs) {
			t.Fatalf("re-encoding of decoded offsets: %v", err)
		}
	})
}

// A sink's snapshot reuses the bytes of transactions encoded by earlier
// snapshots and is byte for byte the encoding of what is pending, before
// and after a commit drops the oldest transactions.
func TestSinkSnapshotIsTheEncodingOfPending(t *testing.T) {
	s := &sinkOp{ctx: &OperatorContext{Task: TaskID{Operator: "out", Subtask: 1}}}
	check := func(n int64, wantPending int) {
		t.Helper()
		b, err := s.Snapshot(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.pending) != wantPending {
			t.Fatalf("checkpoint %d: %d pending, want %d", n, len(s.pending), wantPending)
		}
		if want := encodeTxns(s.pending); string(b) != string(want) {
			t.Fatalf("checkpoint %d: snapshot of %d bytes differs from the %d-byte encoding of the pending transactions", n, len(b), len(want))
		}
	}
	txns := sampleTxns()
	if err := s.Process(0, txns[0].Changes, nil); err != nil {
		t.Fatal(err)
	}
	check(1, 1)
	check(2, 1) // nothing staged: no new transaction
	if err := s.Process(0, txns[0].Changes[:2], nil); err != nil {
		t.Fatal(err)
	}
	check(3, 2)
	s.committing = true
	if err := s.Receive(&commitDone{n: 1}); err != nil {
		t.Fatal(err)
	}
	check(4, 1)
	if s.pending[0].Checkpoint != 3 {
		t.Fatalf("pending transaction of checkpoint %d, want 3", s.pending[0].Checkpoint)
	}
}
