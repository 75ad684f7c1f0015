package runtime

import (
	"bytes"
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
				subtask.Decimal(math.MinInt64+1, math.MaxUint64), subtask.Str(strings.Repeat("x", 300)), subtask.Float(math.Inf(-1))}},
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

// skipRow, the fast path of a ChangelogTable's commit, reads past exactly
// what row decodes and fails where row fails.
func FuzzSkipRowAgreesWithRow(f *testing.F) {
	for _, txn := range sampleTxns() {
		for _, c := range txn.Changes {
			f.Add(appendRow(nil, c.Row))
		}
	}
	f.Add([]byte{2, tagString, 200, 1})
	f.Add([]byte{1, tagDecimal, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0})
	f.Add([]byte{1, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		full, skip := byteReader{buf: b}, byteReader{buf: b}
		full.row()
		skip.skipRow()
		if (full.err == nil) != (skip.err == nil) || (full.err == nil && full.off != skip.off) {
			t.Fatalf("row: offset %d, %v; skipRow: offset %d, %v", full.off, full.err, skip.off, skip.err)
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

// A sink's snapshot is byte for byte the encoding of what is pending,
// before and after a commit drops the oldest transactions, and a pending
// transaction's encoding is the one encodeTxn gives its changes.
func TestSinkSnapshotIsTheEncodingOfPending(t *testing.T) {
	s := &sinkOp{ctx: &OperatorContext{Task: TaskID{Operator: "out", Subtask: 1}}}
	changes := sampleTxns()[0].Changes
	var want []*Txn
	check := func(n int64, wantPending int) {
		t.Helper()
		b, err := s.Snapshot(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.pending) != wantPending {
			t.Fatalf("checkpoint %d: %d pending, want %d", n, len(s.pending), wantPending)
		}
		if w := encodeTxns(want[len(want)-wantPending:]); !bytes.Equal(bytes.Join(b, nil), w) {
			t.Fatalf("checkpoint %d: snapshot of %d bytes differs from the %d-byte encoding of the pending transactions", n, len(b), len(w))
		}
	}
	if err := s.Process(0, changes[:1], nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Process(0, changes[1:], nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, &Txn{TxnID: TxnID{Sink: "out", Writer: 1, Checkpoint: 1}, Changes: changes})
	check(1, 1)
	check(2, 1) // nothing staged: no new transaction
	if err := s.Process(0, changes[:2], nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, &Txn{TxnID: TxnID{Sink: "out", Writer: 1, Checkpoint: 1 << 40}, Changes: changes[:2]})
	check(1<<40, 2)
	s.committing = true
	if err := s.Receive(&commitDone{n: 1}); err != nil {
		t.Fatal(err)
	}
	check(1<<40+1, 1)
	if s.pending[0].Checkpoint != 1<<40 {
		t.Fatalf("pending transaction of checkpoint %d, want %d", s.pending[0].Checkpoint, int64(1<<40))
	}
}

// A transaction larger than a staging chunk is sealed as several parts,
// each of whole changes; the parts of a snapshot stay as they were while
// the sink stages and seals more, and the parts commit to a ChangelogTable
// and a TxnLog as the one encoding of the changes does.
func TestSinkStagesLongTransactionsInParts(t *testing.T) {
	s := &sinkOp{ctx: &OperatorContext{Task: TaskID{Operator: "out", Subtask: 0}}}
	var changes []Record
	for i := range 3000 {
		changes = append(changes, Record{Kind: Insert, KeyGroup: -1, Row: Row{subtask.Int(int64(i)), subtask.Str(strings.Repeat("v", i%700))}})
	}
	// A row larger than a chunk.
	changes = append(changes, Record{Kind: Insert, KeyGroup: -1, Row: Row{subtask.Str(strings.Repeat("w", maxStageChunk+10))}})
	for from := 0; from < len(changes); from += 100 {
		if err := s.Process(0, changes[from:min(from+100, len(changes))], nil); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.Snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 4 {
		t.Fatalf("%d parts, want the header and several chunks", len(first))
	}
	firstBytes := bytes.Join(first, nil)
	want := []*Txn{{TxnID: TxnID{Sink: "out", Checkpoint: 1}, Changes: changes}}
	if w := encodeTxns(want); !bytes.Equal(firstBytes, w) {
		t.Fatalf("snapshot of %d bytes differs from the %d-byte encoding of the transaction", len(firstBytes), len(w))
	}
	if err := s.Process(0, changes[:5], nil); err != nil {
		t.Fatal(err)
	}
	second, err := s.Snapshot(2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.Join(first, nil), firstBytes) {
		t.Fatal("staging after the snapshot changed its parts")
	}
	want = append(want, &Txn{TxnID: TxnID{Sink: "out", Checkpoint: 2}, Changes: changes[:5]})
	if w := encodeTxns(want); !bytes.Equal(bytes.Join(second, nil), w) {
		t.Fatal("snapshot of two transactions differs from their encoding")
	}

	fromParts, fromChanges := NewChangelogTable(), NewChangelogTable()
	log, err := OpenTxnLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, txn := range s.pending {
		if err := commitTxn(fromParts, txn); err != nil {
			t.Fatal(err)
		}
		if err := commitTxn(log, txn); err != nil {
			t.Fatal(err)
		}
		if err := fromChanges.Commit(want[i]); err != nil {
			t.Fatal(err)
		}
	}
	replayed := NewChangelogTable()
	if n, err := log.Replay(replayed); err != nil || n != 2 {
		t.Fatalf("replayed %d transactions: %v", n, err)
	}
	a, errA := fromChanges.Rows()
	b, errB := fromParts.Rows()
	c, errC := replayed.Rows()
	if errA != nil || errB != nil || errC != nil {
		t.Fatal(errA, errB, errC)
	}
	if len(a) != len(changes)+5 || len(b) != len(a) || len(c) != len(a) {
		t.Fatalf("%d rows from changes, %d from parts, %d replayed, want %d", len(a), len(b), len(c), len(changes)+5)
	}
	for i := range a {
		if !a[i].Equal(b[i]) || !a[i].Equal(c[i]) {
			t.Fatalf("row %d: %v from changes, %v from parts, %v replayed", i, a[i], b[i], c[i])
		}
	}
	// A part cut inside a change is refused.
	p := s.pending[0].encoded
	cut := &Txn{TxnID: TxnID{Sink: "out", Checkpoint: 5}, encoded: [][]byte{p[0], p[1][:len(p[1])-1], p[1][len(p[1])-1:]}}
	if err := NewChangelogTable().Commit(cut); err == nil {
		t.Fatal("a change split across parts committed")
	}
}

// recordingCommitter keeps the changes of what it commits.
type recordingCommitter struct{ txns []*Txn }

func (c *recordingCommitter) Commit(t *Txn) error {
	c.txns = append(c.txns, t)
	return nil
}

// A committer of another package gets the changes of a sink's transaction
// decoded from its encoding; a ChangelogTable reads the encoding itself
// and holds what it would hold from the changes.
func TestCommitOfEncodedTransaction(t *testing.T) {
	want := sampleTxns()[0]
	enc := &Txn{TxnID: want.TxnID, encoded: [][]byte{encodeTxn(want)}}
	var rec recordingCommitter
	if err := commitTxn(&rec, enc); err != nil {
		t.Fatal(err)
	}
	if len(rec.txns) != 1 || rec.txns[0].TxnID != want.TxnID || len(rec.txns[0].Changes) != len(want.Changes) {
		t.Fatalf("committed %+v, want the %d changes of %+v", rec.txns, len(want.Changes), want.TxnID)
	}
	for j, c := range want.Changes {
		if g := rec.txns[0].Changes[j]; g.Kind != c.Kind || !g.Row.Equal(c.Row) {
			t.Fatalf("change %d: %v %v, want %v %v", j, g.Kind, g.Row, c.Kind, c.Row)
		}
	}

	adds := &Txn{TxnID: TxnID{Sink: "out", Checkpoint: 3}}
	for _, c := range want.Changes {
		adds.Changes = append(adds.Changes, Record{Kind: Insert, KeyGroup: -1, Row: c.Row}, Record{Kind: UpdateAfter, KeyGroup: -1, Row: c.Row})
	}
	fromChanges, fromEncoding := NewChangelogTable(), NewChangelogTable()
	for _, txn := range []*Txn{adds, want} {
		if err := fromChanges.Commit(txn); err != nil {
			t.Fatal(err)
		}
		if err := commitTxn(fromEncoding, &Txn{TxnID: txn.TxnID, encoded: [][]byte{encodeTxn(txn)}}); err != nil {
			t.Fatal(err)
		}
	}
	a, errA := fromChanges.Rows()
	b, errB := fromEncoding.Rows()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	// Each row added twice, then once more or once less: 3+1+1+3.
	if len(a) != 8 || len(b) != len(a) {
		t.Fatalf("%d rows from changes, %d from the encoding, want 8", len(a), len(b))
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			t.Fatalf("row %d: %v from changes, %v from the encoding", i, a[i], b[i])
		}
	}
	if fromChanges.Stats() != fromEncoding.Stats() {
		t.Fatalf("stats %+v from changes, %+v from the encoding", fromChanges.Stats(), fromEncoding.Stats())
	}
	bad := &Txn{TxnID: TxnID{Sink: "out", Checkpoint: 4}, encoded: [][]byte{encodeTxn(want)[:10]}}
	if err := fromEncoding.Commit(bad); err == nil {
		t.Fatal("a truncated encoding committed")
	}
}
