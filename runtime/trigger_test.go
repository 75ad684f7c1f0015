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
