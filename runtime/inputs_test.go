package runtime

import (
	"math"
	"testing"
)

func twoChannelInputs() *inputs {
	return newInputs(&taskPlan{ins: []inChan{{input: 0}, {input: 1}}})
}

// A channel that delivered barrier n holds its later messages until every
// channel delivered n; then they come out in order.
func TestInputsAlignment(t *testing.T) {
	in := twoChannelInputs()
	if !in.admit(0, "a1") {
		t.Fatal("message on a free channel queued")
	}
	if aligned, err := in.barrier(0, 1); err != nil || aligned {
		t.Fatalf("aligned after one of two barriers: %v %v", aligned, err)
	}
	if in.admit(0, "a2") {
		t.Fatal("message behind a barrier handled before alignment")
	}
	if !in.admit(1, "b1") {
		t.Fatal("message on the unblocked channel queued")
	}
	if _, _, ok := in.next(); ok {
		t.Fatal("blocked channel released a message")
	}
	if aligned, err := in.barrier(1, 1); err != nil || !aligned {
		t.Fatalf("not aligned after both barriers: %v %v", aligned, err)
	}
	in.paused = true
	if _, _, ok := in.next(); ok {
		t.Fatal("paused inputs released a message")
	}
	in.paused = false
	if ch, msg, ok := in.next(); !ok || ch != 0 || msg != "a2" {
		t.Fatalf("next = %d %v %v, want 0 a2", ch, msg, ok)
	}
	if _, err := in.barrier(0, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := in.barrier(1, 3); err == nil {
		t.Fatal("barrier 3 accepted while aligning 2")
	}
}

// The watermark is the minimum over channels; an ended channel stops
// holding it back.
func TestInputsWatermark(t *testing.T) {
	in := twoChannelInputs()
	if _, ok := in.watermark(0, 10); ok {
		t.Fatal("watermark advanced while another channel has none")
	}
	if wm, ok := in.watermark(1, 5); !ok || wm != 5 {
		t.Fatalf("watermark %d %v, want 5", wm, ok)
	}
	if _, ok := in.watermark(1, 3); ok {
		t.Fatal("watermark went back")
	}
	all, wm, ok := in.end(1)
	if all || !ok || wm != 10 {
		t.Fatalf("end of channel 1: all %v, watermark %d %v; want 10", all, wm, ok)
	}
	if all, wm, _ := in.end(0); !all || wm != math.MaxInt64 {
		t.Fatalf("end of both channels: all %v, watermark %d", all, wm)
	}
}
