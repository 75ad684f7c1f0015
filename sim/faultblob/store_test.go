package faultblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
)

func newStore(seed uint64, f Faults, onOp func(op, name string)) *Store {
	return New(rand.New(rand.NewPCG(seed, 0)), f, onOp)
}

func TestRoundTripWithoutFaults(t *testing.T) {
	ctx := context.Background()
	var ops []string
	s := newStore(1, Faults{}, func(op, name string) { ops = append(ops, op+" "+name) })
	for _, name := range []string{"cp/2/b", "cp/1/a", "other"} {
		if err := s.Put(ctx, name, strings.NewReader(name+"!")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Get(ctx, "cp/1/a")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	if string(data) != "cp/1/a!" {
		t.Fatalf("get: %q", data)
	}
	infos, err := s.List(ctx, "cp/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []barrier.BlobInfo{{Name: "cp/1/a", Size: 7}, {Name: "cp/2/b", Size: 7}}; !slices.Equal(infos, want) {
		t.Fatalf("list: %v, want %v", infos, want)
	}
	if err := s.Delete(ctx, "cp/1/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "cp/1/a"); err != nil {
		t.Fatalf("deleting a missing blob: %v", err)
	}
	if _, err := s.Stat(ctx, "cp/1/a"); !barrier.IsNotFound(err) || barrier.IsTransient(err) {
		t.Fatalf("stat of a deleted blob: %v, want permanent not-found", err)
	}
	if err := s.Put(ctx, "../x", strings.NewReader("")); err == nil || barrier.IsTransient(err) {
		t.Fatalf("put of an invalid name: %v, want a permanent error", err)
	}
	if len(ops) != 8 || ops[0] != "put cp/2/b" || ops[4] != "list cp/" {
		t.Fatalf("hook saw %v", ops)
	}
}

func TestInjectedFailuresAreTransientAndHaveNoEffect(t *testing.T) {
	s := newStore(1, Faults{Failure: 1}, nil)
	err := s.Put(context.Background(), "a", strings.NewReader("x"))
	if !barrier.IsTransient(err) || !errors.Is(err, ErrInjected) {
		t.Fatalf("put: %v, want a transient injected failure", err)
	}
	if names := s.Names(); len(names) != 0 {
		t.Fatalf("a failed put landed: %v", names)
	}
}

func TestCancelledContextIsPermanent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newStore(1, Faults{}, nil)
	if err := s.Put(ctx, "a", strings.NewReader("x")); err == nil || barrier.IsTransient(err) {
		t.Fatalf("put with a cancelled context: %v, want a permanent error", err)
	}
}

// TestTimeoutsAreAmbiguous checks that a timed-out put is transient and
// that, across seeds, it sometimes landed and sometimes did not.
func TestTimeoutsAreAmbiguous(t *testing.T) {
	landed := map[bool]int{}
	for seed := uint64(0); seed < 64; seed++ {
		s := newStore(seed, Faults{Timeout: 1, Landed: 0.5}, nil)
		err := s.Put(context.Background(), "a", strings.NewReader("x"))
		if !barrier.IsTransient(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("seed %d: put: %v, want a transient timeout", seed, err)
		}
		landed[len(s.Names()) == 1]++
	}
	if landed[true] == 0 || landed[false] == 0 {
		t.Fatalf("timed-out puts landed %d times of 64: not ambiguous", landed[true])
	}
}

func trace(seed uint64) string {
	ctx := context.Background()
	s := newStore(seed, Faults{Failure: 0.2, Timeout: 0.2, Landed: 0.5}, nil)
	var b strings.Builder
	for i := range 20 {
		name := fmt.Sprintf("b/%d", i%7)
		fmt.Fprintln(&b, s.Put(ctx, name, strings.NewReader(name)))
		if i%3 == 0 {
			fmt.Fprintln(&b, s.Delete(ctx, fmt.Sprintf("b/%d", i%5)))
		}
		infos, err := s.List(ctx, "b/")
		fmt.Fprintln(&b, infos, err)
	}
	fmt.Fprintln(&b, s.Names())
	return b.String()
}

func TestSameSeedSameOutcomes(t *testing.T) {
	distinct := map[string]bool{}
	for seed := uint64(0); seed < 5; seed++ {
		a, b := trace(seed), trace(seed)
		if a != b {
			t.Fatalf("seed %d: two runs differ:\n%s\n---\n%s", seed, a, b)
		}
		distinct[a] = true
	}
	if len(distinct) < 2 {
		t.Fatal("five seeds gave one outcome: the seed does not reach the faults")
	}
}

func TestConcurrentUseIsSafe(t *testing.T) {
	s := newStore(1, Faults{}, nil)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				name := fmt.Sprintf("g%d/%d", g, i)
				s.Put(context.Background(), name, strings.NewReader(name))
				s.List(context.Background(), fmt.Sprintf("g%d/", g))
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n := len(s.Names()); n != 200 {
		t.Fatalf("%d blobs after 200 concurrent puts", n)
	}
}
