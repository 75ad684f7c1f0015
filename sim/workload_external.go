package sim

import (
	"encoding/json"
	"fmt"
	"sync"
)

// record is one output record of the job.
type record struct {
	Off  int64  `json:"o"`
	Text string `json:"t"`
}

// txnID names a sink transaction: the sink subtask that staged it and the
// checkpoint whose barrier closed it.
type txnID struct {
	Writer     int    `json:"w"`
	Checkpoint uint64 `json:"c"`
}

// txn is the output a sink subtask staged between two barriers.
type txn struct {
	ID   txnID    `json:"id"`
	Recs []record `json:"r"`
}

func encodeTxns(ts []txn) []byte {
	b, err := json.Marshal(ts)
	if err != nil {
		panic(err) // plain structs always encode
	}
	return b
}

func decodeTxns(b []byte) ([]txn, error) {
	var ts []txn
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("sink transactions: %w", err)
	}
	return ts, nil
}

// external is the system the sink writes to: it outlives every crash of the
// job and takes transactions idempotently by id. Committing a transaction a
// second time with other content, or an offset twice, breaks exactly-once.
type external struct {
	mu    sync.Mutex
	txns  map[txnID]string
	out   map[int64]string
	want  []string // the failure-free output, by offset
	dups  int
	fault func(error)
}

func newExternal(want []string, fault func(error)) *external {
	return &external{txns: map[txnID]string{}, out: map[int64]string{}, want: want, fault: fault}
}

func (x *external) commit(t txn) {
	x.mu.Lock()
	defer x.mu.Unlock()
	digest := string(encodeTxns([]txn{t}))
	if prev, ok := x.txns[t.ID]; ok {
		if prev != digest {
			x.fault(fmt.Errorf("exactly-once: transaction %+v committed twice with different content", t.ID))
		}
		x.dups++
		return
	}
	x.txns[t.ID] = digest
	for _, r := range t.Recs {
		if prev, ok := x.out[r.Off]; ok {
			x.fault(fmt.Errorf("exactly-once: output of offset %d committed twice (transaction %+v; %q then %q)", r.Off, t.ID, prev, r.Text))
			continue
		}
		if r.Off < 0 || r.Off >= int64(len(x.want)) || r.Text != x.want[r.Off] {
			x.fault(fmt.Errorf("exactly-once: transaction %+v commits %q for offset %d, the failure-free run gives %q", t.ID, r.Text, r.Off, x.wantAt(r.Off)))
		}
		x.out[r.Off] = r.Text
	}
}

func (x *external) wantAt(off int64) string {
	if off < 0 || off >= int64(len(x.want)) {
		return "(no such offset)"
	}
	return x.want[off]
}

func (x *external) committed() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.out)
}

// check compares the committed output with the reference.
func (x *external) check(want []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.out) != len(want) {
		return fmt.Errorf("exactly-once: %d of %d outputs committed", len(x.out), len(want))
	}
	for off, w := range want {
		if got := x.out[int64(off)]; got != w {
			return fmt.Errorf("exactly-once: output of offset %d is %q, the failure-free run gives %q", off, got, w)
		}
	}
	return nil
}
