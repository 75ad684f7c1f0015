package compaction

import (
	"math/rand/v2"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// TestRoundCostIndependentOfTableSize runs the same barrier delta against a
// table and one ten times larger, both with their data in the deepest level,
// and compares what the rounds read: the files opened and the bytes read
// must not grow with the table, because the round reads the delta and, by
// page-pruned lookups in files the session keeps open, only the deeper pages
// its keys fall in. (The session's first lookup into a file opens it, once.)
func TestRoundCostIndependentOfTableSize(t *testing.T) {
	const delta = 16
	cost := func(rows int64) (opens int, bytes int64) {
		e := newEnv(t, 1, nil)
		s := e.session(Config{})
		e.barrier(s, e.bulk(evenKeys(rows), int(rows/2), "base"))
		rng := rand.New(rand.NewPCG(9, 9))
		e.barrier(s, e.bulk(randomKeys(rng, rows, delta), delta, "warm"))
		e.shapeAll(s)
		snap := e.bulk(randomKeys(rng, rows, delta), delta, "upd")
		o0, b0 := e.fio.dataReads()
		s.cfg.CheckInvariants = false // the check reads the whole bucket
		if _, err := s.Barrier(snap, e.now+1000); err != nil {
			t.Fatal(err)
		}
		o1, b1 := e.fio.dataReads()
		s.cfg.CheckInvariants = true
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		return o1 - o0, b1 - b0
	}
	smallOpens, smallBytes := cost(50_000)
	largeOpens, largeBytes := cost(500_000)
	t.Logf("round reads: 50k rows: %d files, %d bytes; 500k rows: %d files, %d bytes", smallOpens, smallBytes, largeOpens, largeBytes)
	if largeOpens > smallOpens {
		t.Fatalf("the round opened %d data files on the large table, %d on the small one", largeOpens, smallOpens)
	}
	// Ten times the rows: the keys touch somewhat more distinct pages (and
	// each page read pulls a 16 KiB buffer), but nothing like ten times.
	if float64(largeBytes) > 3*float64(smallBytes) {
		t.Fatalf("the round read %d bytes on the large table, %d on the small one", largeBytes, smallBytes)
	}
}

func TestBackpressureWhenRunsPassTheStopTrigger(t *testing.T) {
	e := newEnv(t, 1, map[string]string{
		table.OptionNumLevels: "6", table.OptionNumSortedRunTrigger: "2", table.OptionNumSortedRunStop: "3",
	})
	s := e.session(Config{})
	stalledAt := 0
	for i := int64(0); i < 5 && stalledAt == 0; i++ {
		e.round(s, puts(i*10, i*10+100, "v"+itoa(i)), nil)
		if s.Backpressure().Stalled {
			stalledAt = int(i) + 1
		}
	}
	if stalledAt != 4 {
		t.Fatalf("stalled after %d rounds without shaping, want 4 (4 runs > stop trigger 3)", stalledAt)
	}
	e.shapeAll(s)
	if b := s.Backpressure(); b.Stalled {
		t.Fatalf("still stalled after shaping: %+v", b)
	}
	e.checkModel(nil)
}
