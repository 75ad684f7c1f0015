package runtime

import (
	"slices"
	"testing"
)

// One checkpoint at a time: requests meanwhile coalesce into the next
// trigger, which serves all their tokens; a refused trigger is asked again
// once the checkpoint in flight ends.
func TestTriggers(t *testing.T) {
	var tr triggers
	if tr.request(1) {
		t.Fatal("trigger before the tasks run")
	}
	tr.ready = true
	if !tr.next() {
		t.Fatal("queued request not triggered once ready")
	}
	if tr.request(2) {
		t.Fatal("second trigger while one is asked")
	}
	if got := tr.triggered(5, false); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("tokens of checkpoint 5: %v", got)
	}
	tr.request(3)
	if tr.next() {
		t.Fatal("trigger while checkpoint 5 is in flight")
	}
	if tr.ended(4) {
		t.Fatal("an unknown checkpoint ended the one in flight")
	}
	if !tr.ended(5) || !tr.next() {
		t.Fatal("queued requests not triggered after checkpoint 5")
	}
	if got := tr.triggered(0, true); got != nil {
		t.Fatalf("refused trigger served %v", got)
	}
	if !tr.request(0) {
		t.Fatal("refused trigger not asked again")
	}
	if got := tr.triggered(6, false); !slices.Equal(got, []uint64{2, 3}) {
		t.Fatalf("tokens of checkpoint 6: %v", got)
	}
}

// With overlap, a second checkpoint starts once every task ended the first
// one's sync phase, never a third; the next goes once one of them ended and
// the newest is synced everywhere.
func TestTriggersOverlap(t *testing.T) {
	tr := triggers{ready: true, overlap: true, tasks: 2}
	if !tr.request(1) {
		t.Fatal("first request not triggered")
	}
	tr.triggered(5, false)
	if tr.request(2) {
		t.Fatal("trigger while checkpoint 5's sync phases run")
	}
	if tr.taskSynced(4) || tr.taskSynced(5) {
		t.Fatal("checkpoint 5 synced before both tasks ended its sync phase")
	}
	if !tr.taskSynced(5) || !tr.next() {
		t.Fatal("queued request not triggered once checkpoint 5 synced everywhere")
	}
	if got := tr.triggered(6, false); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("tokens of checkpoint 6: %v", got)
	}
	tr.request(3)
	tr.taskSynced(6)
	if tr.taskSynced(6) && tr.next() {
		t.Fatal("a third checkpoint in flight")
	}
	if !tr.ended(5) || !tr.next() {
		t.Fatal("queued request not triggered after checkpoint 5 ended, with 6 synced")
	}
	tr.triggered(7, false)
	if !tr.ended(7) || tr.ended(7) {
		t.Fatal("checkpoint 7 did not end exactly once")
	}
	if !tr.request(4) {
		t.Fatal("checkpoint 6 in flight and synced everywhere: the next may start")
	}
}
