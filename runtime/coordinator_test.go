package runtime

import "testing"

// One checkpoint at a time: triggers meanwhile coalesce into the next; a
// checkpoint completes only after every task acknowledged and it is stored;
// acks of an aborted checkpoint are dropped.
func TestCoordinator(t *testing.T) {
	c := newCoordinator(2, 5)
	id, tokens, ok := c.request(1)
	if !ok || id != 5 || len(tokens) != 1 {
		t.Fatalf("first request: %d %v %v", id, tokens, ok)
	}
	if _, _, ok := c.request(2); ok {
		t.Fatal("second checkpoint started while one is pending")
	}
	c.request(3)
	if last, _ := c.ack(5, 0, TaskSnapshot{}); last {
		t.Fatal("complete after one of two acks")
	}
	if _, err := c.ack(5, 0, TaskSnapshot{}); err == nil {
		t.Fatal("second ack of a task accepted")
	}
	if last, _ := c.ack(5, 1, TaskSnapshot{}); !last {
		t.Fatal("not complete after every ack")
	}
	if _, _, ok := c.startQueued(); ok {
		t.Fatal("next checkpoint started while one is storing")
	}
	c.stored(5)
	if c.completed != 5 {
		t.Fatalf("completed %d, want 5", c.completed)
	}
	id, tokens, ok = c.startQueued()
	if !ok || id != 6 || len(tokens) != 2 {
		t.Fatalf("queued checkpoint: %d %v %v", id, tokens, ok)
	}
	if !c.abort(6) {
		t.Fatal("abort of the pending checkpoint refused")
	}
	if last, _ := c.ack(6, 0, TaskSnapshot{}); last {
		t.Fatal("ack of an aborted checkpoint counted")
	}
}
