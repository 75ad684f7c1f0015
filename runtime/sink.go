package runtime

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/lakestate/lakestate/barrier"
)

// Committer is the external system an exactly-once sink writes to.
type Committer interface {
	// Commit makes a transaction's changes visible. A sink subtask commits
	// its transactions one at a time, in checkpoint order, on the executor
	// (off the actors), once the checkpoint that closed the transaction has
	// completed. After a restore it commits again the transactions the
	// checkpoint still held, which may have been committed already, so Commit
	// must be idempotent on the transaction's TxnID.
	Commit(txn *Txn) error
}

// TxnID names a sink transaction: the output one sink subtask staged up to
// one checkpoint barrier. Checkpoint ids never repeat across the runs of a
// job, so neither do transaction ids.
type TxnID struct {
	Sink       string
	Writer     int // the sink subtask that staged it
	Checkpoint int64
}

// Txn is a sink transaction.
type Txn struct {
	TxnID
	Changes []Record
	// encoded, when set, is the transaction's encoding (encodeTxn) in parts
	// to be read back to back, which a sink stages as its changes arrive:
	// the first part starts with the header, and no change straddles two
	// parts. The parts never change. The committers of this package read
	// it instead of Changes, which a sink then leaves nil; any other
	// committer gets Changes decoded from it.
	encoded [][]byte
}

// encoding returns the transaction's encoding, in parts.
func (t *Txn) encoding() [][]byte {
	if t.encoded != nil {
		return t.encoded
	}
	return [][]byte{encodeTxn(t)}
}

// encodingCommitter is a Committer that reads a transaction's changes from
// its encoding when the Txn carries one.
type encodingCommitter interface {
	Committer
	readsEncoding()
}

// commitTxn commits t through c, decoding its changes first unless c reads
// the encoding.
func commitTxn(c Committer, t *Txn) error {
	if _, ok := c.(encodingCommitter); ok || t.Changes != nil || t.encoded == nil {
		return c.Commit(t)
	}
	txns, err := decodeTxns(bytes.Join(t.encoded, nil), t.Sink)
	if err != nil {
		return err
	}
	return c.Commit(txns[0])
}

// Sink ends the stream in an exactly-once sink named name: each sink subtask
// stages what arrives between two barriers as one transaction, keeps the
// transactions not yet committed in the checkpoint, and commits them through c
// once their checkpoint completes. A run restored from a checkpoint commits
// the transactions that checkpoint holds and discards everything staged
// after it.
func (s Stream) Sink(name string, c Committer) {
	n := s.g.addNode(name, kindSink)
	n.newOp = func() Operator { return &sinkOp{committer: c} }
	s.g.connect(s, n, 0, nil)
}

// sinkOp is the operator of one sink subtask.
type sinkOp struct {
	committer Committer
	ctx       *OperatorContext
	// staged is the encoding of the changes that arrived since the last
	// barrier, a kind byte and a row each (txncodec.go), in chunks of whole
	// changes: a change is encoded once, as it arrives, and its row is not
	// kept; a long transaction takes more chunks instead of growing one
	// buffer, which would copy it over and over. The barrier seals the
	// chunks as the transaction's parts, behind its header. nStaged counts
	// the changes.
	staged  [][]byte
	nStaged int
	// pending is the transactions closed at a barrier and not yet
	// committed, ascending by checkpoint, each with its encoding.
	pending []*Txn
	// completed is the newest checkpoint known complete, reported the newest
	// reported committed; committing is set while a commit job runs.
	completed, reported int64
	committing          bool
}

// commitDone is the result of a commit job: the first n pending
// transactions are committed.
type commitDone struct {
	n   int
	err error
}

func (s *sinkOp) Open(ctx *OperatorContext) error {
	s.ctx = ctx
	if ctx.Restored == nil {
		return nil
	}
	// Like union list state: the transactions of old subtask j go to new
	// subtask j mod p.
	for j, b := range ctx.Restored {
		if j%ctx.Parallelism != ctx.Task.Subtask {
			continue
		}
		txns, err := decodeTxns(b, ctx.Task.Operator)
		if err != nil {
			return fmt.Errorf("restore of checkpoint %d: subtask %d: %w", ctx.RestoredID, j, err)
		}
		s.pending = append(s.pending, txns...)
	}
	slices.SortStableFunc(s.pending, func(a, b *Txn) int {
		if c := cmp.Compare(a.Checkpoint, b.Checkpoint); c != 0 {
			return c
		}
		return cmp.Compare(a.Writer, b.Writer)
	})
	for _, t := range s.pending {
		t.encoded = [][]byte{encodeTxn(t)}
	}
	// Every transaction the checkpoint holds was closed at or before it, and
	// the checkpoint completed.
	s.completed = ctx.RestoredID
	s.commit()
	return nil
}

// Staging chunks start at minStageChunk bytes and double up to
// maxStageChunk. A change is appended whole to the last chunk when it
// fits; its size is worked out only once the chunk has less than
// stageSlack bytes left. (A change larger than the room left above that
// grows the chunk, which is then copied: rare, and still correct, since
// nothing else holds the chunk before the barrier seals it.)
const (
	minStageChunk = 64 << 10
	maxStageChunk = 1 << 20
	stageSlack    = 512
)

func (s *sinkOp) Process(_ int, recs []Record, _ Emitter) error {
	if len(s.staged) == 0 {
		s.staged = append(s.staged, make([]byte, 0, minStageChunk))
	}
	last := len(s.staged) - 1
	c := s.staged[last]
	for _, r := range recs {
		if room := cap(c) - len(c); room < stageSlack {
			if need := 1 + rowSize(r.Row); need > room {
				s.staged[last] = c
				c = make([]byte, 0, max(need, minStageChunk, min(2*cap(c), maxStageChunk)))
				s.staged = append(s.staged, c)
				last++
			}
		}
		c = appendRow(append(c, byte(r.Kind)), r.Row)
	}
	s.staged[last] = c
	s.nStaged += len(recs)
	return nil
}

// Snapshot returns the pending transactions' encoding in parts, the
// transactions' own bytes (read-only, as every operator's extras).
func (s *sinkOp) Snapshot(n int64) ([][]byte, error) {
	s.seal(n)
	return joinTxns(s.pending), nil
}

// snapshotPieces returns the pending transactions as the count of them
// and one piece per transaction (its encoding without the count): the
// checkpoint stores each piece once, however many checkpoints hold it
// before it is committed. Head and pieces back to back are what Snapshot
// returns.
func (s *sinkOp) snapshotPieces(n int64) ([][]byte, []barrier.ExtraPiece, error) {
	s.seal(n)
	head := [][]byte{binary.AppendUvarint(nil, uint64(len(s.pending)))}
	pieces := make([]barrier.ExtraPiece, len(s.pending))
	for i, t := range s.pending {
		pieces[i] = barrier.ExtraPiece{Owner: extrasKey, Name: txnPieceName(t.TxnID), Data: txnBody(t)}
	}
	return head, pieces, nil
}

// txnPieceName names a transaction's piece among its sink subtask's: a
// restored subtask may hold transactions of several old writers.
func txnPieceName(id TxnID) string {
	return "txn-" + strconv.Itoa(id.Writer) + "-" + strconv.FormatInt(id.Checkpoint, 10)
}

// seal closes what was staged since the last barrier as the transaction of
// checkpoint n, unless nothing was.
func (s *sinkOp) seal(n int64) {
	if s.nStaged == 0 {
		return
	}
	id := TxnID{Sink: s.ctx.Task.Operator, Writer: s.ctx.Task.Subtask, Checkpoint: n}
	parts := make([][]byte, 1, 1+len(s.staged))
	parts[0] = txnHeader(id, s.nStaged)
	for _, c := range s.staged {
		if len(c) > 0 {
			parts = append(parts, c[:len(c):len(c)])
		}
	}
	s.pending = append(s.pending, &Txn{TxnID: id, encoded: parts})
	// The next transaction goes on in the room the last chunk has
	// left, past the bytes sealed now, which stay as they are.
	c := s.staged[len(s.staged)-1]
	clear(s.staged)
	s.staged = s.staged[:0]
	if cap(c)-len(c) >= stageSlack {
		s.staged = append(s.staged, c[len(c):])
	}
	s.nStaged = 0
}

func (s *sinkOp) CheckpointComplete(n int64) error {
	s.completed = max(s.completed, n)
	s.commit()
	return nil
}

func (s *sinkOp) CheckpointAborted(int64) error { return nil }

// commit starts a commit job for the pending transactions of completed
// checkpoints, unless one runs; once nothing is left to commit it reports
// the completed checkpoint as committed.
func (s *sinkOp) commit() {
	if s.committing {
		return
	}
	n := 0
	for n < len(s.pending) && s.pending[n].Checkpoint <= s.completed {
		n++
	}
	if n == 0 {
		if s.completed > s.reported {
			s.reported = s.completed
			s.ctx.committed(s.completed)
		}
		return
	}
	s.committing = true
	txns, c := slices.Clone(s.pending[:n]), s.committer
	s.ctx.Submit(func() any {
		for _, t := range txns {
			if err := commitTxn(c, t); err != nil {
				return &commitDone{err: fmt.Errorf("commit of %s/%d/%d: %w", t.Sink, t.Writer, t.Checkpoint, err)}
			}
		}
		return &commitDone{n: len(txns)}
	})
}

func (s *sinkOp) Receive(msg any) error {
	m, ok := msg.(*commitDone)
	if !ok {
		return fmt.Errorf("sink: unexpected message %T", msg)
	}
	if !s.committing || m.n > len(s.pending) {
		return fmt.Errorf("sink: commit result for %d transactions, %d pending (committing %v)", m.n, len(s.pending), s.committing)
	}
	s.committing = false
	if m.err != nil {
		return m.err
	}
	s.pending = slices.Delete(s.pending, 0, m.n)
	s.commit()
	return nil
}
