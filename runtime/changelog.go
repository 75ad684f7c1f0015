package runtime

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ChangelogTable is a Committer that applies committed changes to an
// in-memory multiset of rows: +I and +U add a copy of their row, -U and -D
// remove one. Counts are signed, so the result does not depend on the order
// in which sink subtasks commit; once the job is done every count must be
// non-negative. It remembers the transactions it committed and ignores a
// second commit of one, which is what makes a restored job's re-commits
// harmless. It is safe for concurrent use.
//
// A row is held as its encoding (rowcodec.go) in a rowCounts: bytes the
// garbage collector does not scan, where rows of datums would have it walk
// every string of every row at every cycle. Rows decodes them once.
type ChangelogTable struct {
	mu         sync.Mutex
	committed  map[TxnID]bool
	rows       *rowCounts
	changes    int64
	duplicates int
	key        []byte
}

// NewChangelogTable returns an empty table.
func NewChangelogTable() *ChangelogTable {
	return &ChangelogTable{committed: map[TxnID]bool{}, rows: newRowCounts()}
}

// Commit applies a transaction's changes unless it was committed before.
func (t *ChangelogTable) Commit(txn *Txn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.committed[txn.TxnID] {
		t.duplicates++
		return nil
	}
	if txn.encoded != nil {
		n, err := t.applyEncoded(txn.encoded)
		if err != nil {
			return fmt.Errorf("transaction %s/%d/%d: %w", txn.Sink, txn.Writer, txn.Checkpoint, err)
		}
		t.changes += int64(n)
	} else {
		for _, c := range txn.Changes {
			t.key = rowKey(t.key[:0], c.Row)
			t.rows.add(t.key, delta(c.Kind.Adds()))
		}
		t.rows.compact()
		t.changes += int64(len(txn.Changes))
	}
	t.committed[txn.TxnID] = true
	return nil
}

func (t *ChangelogTable) readsEncoding() {}

// applyEncoded applies the changes of a transaction's encoding (encodeTxn)
// in parts and returns their number. The parts never change (Txn.encoded),
// so the table adopts each as a chunk of its rows: a new row is named
// where it lies instead of copied. The encoding is a sink's own: an error
// means a bug, and fails the job.
func (t *ChangelogTable) applyEncoded(parts [][]byte) (int, error) {
	if len(parts) == 0 {
		return 0, fmt.Errorf("empty encoding")
	}
	r := byteReader{buf: parts[0]}
	if n := r.uvarint("transaction count"); r.err == nil && n != 1 {
		r.fail("%d transactions, want 1", n)
	}
	r.uvarint("writer")
	r.uvarint("checkpoint")
	n := r.uvarint("change count")
	if r.err != nil {
		return 0, r.err
	}
	seen := uint64(0)
	for i, p := range parts {
		if i > 0 {
			r = byteReader{buf: p}
		}
		if r.off == len(p) {
			continue
		}
		chunk, named := t.rows.adopt(p), false
		for r.err == nil && r.off < len(p) {
			if seen == n {
				r.fail("more than %d changes", n)
				break
			}
			kind := Change(r.byte("change kind"))
			if r.err == nil && !kind.valid() {
				r.fail("change %d: unknown kind %d", seen, kind)
			}
			at := r.off
			r.skipRow()
			if r.err == nil && t.rows.addAdopted(chunk, at, r.off-at, delta(kind.Adds())) {
				named = true
			}
			seen++
		}
		if !named {
			t.rows.unadopt(chunk)
		}
		t.rows.compact()
		if r.err != nil {
			return 0, fmt.Errorf("part %d: %w", i, r.err)
		}
	}
	if seen != n {
		return 0, fmt.Errorf("%d changes, header says %d", seen, n)
	}
	return int(n), nil
}

// delta is what a change adds to its row's count.
func delta(adds bool) int64 {
	if adds {
		return 1
	}
	return -1
}

// Rows returns the table's rows, a row repeated as often as it is held,
// sorted column by column (strings by bytes, numbers by integer value). A row
// retracted more often than added is an error: the changelog was not applied
// exactly once.
func (t *ChangelogTable) Rows() ([]Row, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	type held struct {
		row   Row
		count int64
	}
	rows := make([]held, 0, t.rows.len())
	err := t.rows.each(func(key []byte, count int64) error {
		r := byteReader{buf: key}
		row := r.row()
		if err := r.finish(); err != nil {
			return fmt.Errorf("row %d of the table: %w", len(rows), err)
		}
		if count < 0 {
			return fmt.Errorf("row %v retracted %d more times than added", row, -count)
		}
		rows = append(rows, held{row, count})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b held) int { return compareRows(a.row, b.row) })
	var out []Row
	for _, r := range rows {
		for range r.count {
			out = append(out, r.row)
		}
	}
	return out, nil
}

// compareRows orders rows column by column: NULL first, then strings by
// bytes and numbers by integer value (a column holds one or the other).
func compareRows(a, b Row) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if c := cmp.Compare(boolInt(!x.IsNull()), boolInt(!y.IsNull())); c != 0 {
			return c
		}
		if c := strings.Compare(x.Str(), y.Str()); c != 0 {
			return c
		}
		xh, xl := x.Decimal()
		yh, yl := y.Decimal()
		if c := cmp.Compare(xh, yh); c != 0 {
			return c
		}
		if c := cmp.Compare(int64(xl), int64(yl)); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ChangelogStats counts what a ChangelogTable received.
type ChangelogStats struct {
	Transactions int   // distinct transactions committed
	Duplicates   int   // commits of a transaction committed before
	Changes      int64 // changes applied
}

// Stats returns the table's counters.
func (t *ChangelogTable) Stats() ChangelogStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return ChangelogStats{Transactions: len(t.committed), Duplicates: t.duplicates, Changes: t.changes}
}
