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
type ChangelogTable struct {
	mu         sync.Mutex
	committed  map[TxnID]bool
	rows       map[string]*tableRow
	changes    int64
	duplicates int
	key        []byte
}

type tableRow struct {
	row   Row
	count int64
}

// NewChangelogTable returns an empty table.
func NewChangelogTable() *ChangelogTable {
	return &ChangelogTable{committed: map[TxnID]bool{}, rows: map[string]*tableRow{}}
}

// Commit applies a transaction's changes unless it was committed before.
func (t *ChangelogTable) Commit(txn *Txn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.committed[txn.TxnID] {
		t.duplicates++
		return nil
	}
	t.committed[txn.TxnID] = true
	for _, c := range txn.Changes {
		t.key = rowKey(t.key[:0], c.Row)
		r := t.rows[string(t.key)]
		if r == nil {
			r = &tableRow{row: c.Row}
			t.rows[string(t.key)] = r
		}
		if c.Kind.Adds() {
			r.count++
		} else {
			r.count--
		}
		if r.count == 0 {
			delete(t.rows, string(t.key))
		}
	}
	t.changes += int64(len(txn.Changes))
	return nil
}

// Rows returns the table's rows, a row repeated as often as it is held,
// sorted column by column (strings by bytes, numbers by integer value). A row
// retracted more often than added is an error: the changelog was not applied
// exactly once.
func (t *ChangelogTable) Rows() ([]Row, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := make([]*tableRow, 0, len(t.rows))
	for _, r := range t.rows {
		if r.count < 0 {
			return nil, fmt.Errorf("row %v retracted %d more times than added", r.row, -r.count)
		}
		held = append(held, r)
	}
	slices.SortFunc(held, func(a, b *tableRow) int { return compareRows(a.row, b.row) })
	var out []Row
	for _, r := range held {
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
