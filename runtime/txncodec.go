package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// A sink subtask's extras: its transactions not yet committed.
//
//	uvarint count, then per transaction:
//	  uvarint writer, uvarint checkpoint, uvarint change count,
//	  per change: kind byte, row (see rowcodec.go)

func encodeTxns(txns []*Txn) []byte {
	encoded := make([]*Txn, len(txns))
	for i, t := range txns {
		encoded[i] = &Txn{TxnID: t.TxnID, encoded: [][]byte{encodeTxn(t)}}
	}
	return bytes.Join(joinTxns(encoded), nil)
}

// txnHeader returns the header of the encoding of transaction id with n
// changes: the count 1, the writer, the checkpoint and the change count.
func txnHeader(id TxnID, n int) []byte {
	h := binary.AppendUvarint(make([]byte, 0, 1+3*binary.MaxVarintLen64), 1)
	h = binary.AppendUvarint(h, uint64(id.Writer))
	h = binary.AppendUvarint(h, uint64(id.Checkpoint))
	return binary.AppendUvarint(h, uint64(n))
}

// encodeTxn returns the encoding of t alone: the count 1, then t. A sink
// encodes each transaction once, as its changes arrive, and reuses the
// bytes in every snapshot that still holds it.
func encodeTxn(t *Txn) []byte {
	// The exact size first: the changes between two checkpoints can be
	// many megabytes, and growing the buffer would copy them over and over.
	h := txnHeader(t.TxnID, len(t.Changes))
	size := len(h)
	for _, c := range t.Changes {
		size += 1 + rowSize(c.Row)
	}
	out := append(make([]byte, 0, size), h...)
	for _, c := range t.Changes {
		out = append(out, byte(c.Kind))
		out = appendRow(out, c.Row)
	}
	if len(out) != size {
		panic(fmt.Sprintf("runtime: transaction %s/%d/%d encoded in %d bytes, sized %d", t.Sink, t.Writer, t.Checkpoint, len(out), size))
	}
	return out
}

// joinTxns returns the encoding of txns, in that order, as parts written
// back to back: the parts of the encodings they carry, without their count
// byte behind a count of its own when there are several. It copies no
// transaction's bytes: the parts are the transactions' own, which nobody
// changes once sealed.
func joinTxns(txns []*Txn) [][]byte {
	if len(txns) == 1 {
		return slices.Clip(txns[0].encoded)
	}
	n := 1
	for _, t := range txns {
		n += len(t.encoded)
	}
	parts := make([][]byte, 1, n)
	parts[0] = binary.AppendUvarint(nil, uint64(len(txns)))
	for _, t := range txns {
		parts = append(parts, txnBody(t)...)
	}
	return parts
}

// txnBody returns t's encoding without its count, in parts: what follows
// the count when several transactions are encoded together.
func txnBody(t *Txn) [][]byte {
	// Every encoding starts with the count 1, a single byte.
	return append([][]byte{t.encoded[0][1:]}, t.encoded[1:]...)
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
