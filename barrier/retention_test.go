package barrier

import (
	"slices"
	"testing"
)

func TestRetentionKeepsTheNewest(t *testing.T) {
	r, err := NewRetention(2)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		add      CheckpointID
		subsumed []CheckpointID
		kept     []CheckpointID
	}{
		{1, nil, []CheckpointID{1}},
		{3, nil, []CheckpointID{1, 3}},
		{4, []CheckpointID{1}, []CheckpointID{3, 4}},
		{9, []CheckpointID{3}, []CheckpointID{4, 9}},
	}
	for _, s := range steps {
		got, err := r.Add(s.add)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, s.subsumed) || !slices.Equal(r.IDs(), s.kept) {
			t.Fatalf("add %d: subsumed %v kept %v, want %v %v", s.add, got, r.IDs(), s.subsumed, s.kept)
		}
	}
	if id, ok := r.Latest(); !ok || id != 9 {
		t.Fatalf("latest = %d %v", id, ok)
	}
	if _, err := r.Add(9); err == nil {
		t.Fatalf("re-adding the latest accepted")
	}
	if _, err := r.Add(5); err == nil {
		t.Fatalf("adding an older checkpoint accepted")
	}
	if _, err := NewRetention(0); err == nil {
		t.Fatalf("keep 0 accepted")
	}
	var empty Retention
	if _, ok := empty.Latest(); ok {
		t.Fatalf("empty retention has a latest")
	}
}
