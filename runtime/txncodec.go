package runtime

import (
	"encoding/binary"
	"fmt"
)

// A sink subtask's extras: its transactions not yet committed.
//
//	uvarint count, then per transaction:
//	  uvarint writer, uvarint checkpoint, uvarint change count,
//	  per change: kind byte, row (see rowcodec.go)

func encodeTxns(txns []*Txn) []byte {
	encoded := make([]*Txn, len(txns))
	for i, t := range txns {
		encoded[i] = &Txn{TxnID: t.TxnID, encoded: encodeTxn(t)}
	}
	return joinTxns(encoded)
}

// txnHeaderRoom bounds the header of encodeTxn: the count 1, then the
// writer, the checkpoint and the change count, uvarints of 10 bytes at most.
const txnHeaderRoom = 1 + 3*binary.MaxVarintLen64

// sealTxn returns the encoding of transaction id whose n changes, encoded,
// follow txnHeaderRoom bytes in staged: it writes the header right before
// them, in staged, and returns the window from the header on.
func sealTxn(staged []byte, id TxnID, n int) []byte {
	var room [txnHeaderRoom]byte
	h := binary.AppendUvarint(room[:0], 1)
	h = binary.AppendUvarint(h, uint64(id.Writer))
	h = binary.AppendUvarint(h, uint64(id.Checkpoint))
	h = binary.AppendUvarint(h, uint64(n))
	at := txnHeaderRoom - len(h)
	copy(staged[at:], h)
	return staged[at:len(staged):len(staged)]
}

// encodeTxn returns the encoding of t alone: the count 1, then t. A sink
// encodes each transaction once, when its checkpoint closes it, and reuses
// the bytes in every snapshot that still holds it: as they are when t is
// the only one, without the count byte in a longer list.
func encodeTxn(t *Txn) []byte {
	// The exact size first: the changes between two checkpoints can be
	// many megabytes, and growing the buffer would copy them over and over.
	size := 1 + uvarintSize(uint64(t.Writer)) + uvarintSize(uint64(t.Checkpoint)) + uvarintSize(uint64(len(t.Changes)))
	for _, c := range t.Changes {
		size += 1 + rowSize(c.Row)
	}
	out := binary.AppendUvarint(make([]byte, 0, size), 1)
	out = binary.AppendUvarint(out, uint64(t.Writer))
	out = binary.AppendUvarint(out, uint64(t.Checkpoint))
	out = binary.AppendUvarint(out, uint64(len(t.Changes)))
	for _, c := range t.Changes {
		out = append(out, byte(c.Kind))
		out = appendRow(out, c.Row)
	}
	if len(out) != size {
		panic(fmt.Sprintf("runtime: transaction %s/%d/%d encoded in %d bytes, sized %d", t.Sink, t.Writer, t.Checkpoint, len(out), size))
	}
	return out
}

// joinTxns returns the encoding of txns, in that order, from the encodings
// they carry. The encoding of a single transaction is its own encoding,
// capped so that appending to it copies.
func joinTxns(txns []*Txn) []byte {
	if len(txns) == 1 {
		b := txns[0].encoded
		return b[:len(b):len(b)]
	}
	size := uvarintSize(uint64(len(txns)))
	for _, t := range txns {
		size += len(t.encoded) - 1
	}
	out := binary.AppendUvarint(make([]byte, 0, size), uint64(len(txns)))
	for _, t := range txns {
		out = append(out, t.encoded[1:]...)
	}
	return out
}

// decodeTxns decodes the transactions of the sink named sink.
func decodeTxns(b []byte, sink string) ([]*Txn, error) {
	r := byteReader{buf: b}
	n := r.uvarint("transaction count")
	if r.err == nil && n > uint64(len(b)) {
		r.fail("transaction count %d exceeds the %d bytes", n, len(b))
	}
	var out []*Txn
	for i := uint64(0); i < n && r.err == nil; i++ {
		writer, id := r.uvarint("writer"), r.uvarint("checkpoint")
		changes := r.uvarint("change count")
		if r.err != nil {
			break
		}
		if writer > 1<<31 || id == 0 || id > 1<<62 {
			r.fail("transaction %d: writer %d, checkpoint %d out of range", i, writer, id)
			break
		}
		if changes > uint64(len(b)-r.off) {
			r.fail("transaction %d: %d changes exceed the %d bytes left", i, changes, len(b)-r.off)
			break
		}
		t := &Txn{TxnID: TxnID{Sink: sink, Writer: int(writer), Checkpoint: int64(id)}, Changes: make([]Record, 0, changes)}
		for j := uint64(0); j < changes && r.err == nil; j++ {
			kind := Change(r.byte("change kind"))
			if r.err == nil && !kind.valid() {
				r.fail("transaction %d, change %d: unknown kind %d", i, j, kind)
			}
			row := r.row()
			t.Changes = append(t.Changes, Record{Kind: kind, KeyGroup: -1, Row: row})
		}
		out = append(out, t)
	}
	if err := r.finish(); err != nil {
		return nil, fmt.Errorf("sink %s transactions: %w", sink, err)
	}
	return out, nil
}
