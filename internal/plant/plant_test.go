package plant

import (
	"slices"
	"testing"
)

func TestNamesRoundTrip(t *testing.T) {
	for _, b := range All() {
		got, err := Parse(b.String())
		if err != nil || got != b {
			t.Fatalf("Parse(%q) = %v, %v", b.String(), got, err)
		}
	}
	if _, err := Parse("no-such-bug"); err == nil {
		t.Fatal("Parse accepted an unknown name")
	}
	got, err := ParseList([]string{"two-compactors", "reuse-unconfirmed", "two-compactors"})
	if err != nil || !slices.Equal(got, []Bug{ReuseUnconfirmed, TwoCompactors}) {
		t.Fatalf("ParseList = %v, %v", got, err)
	}
}

func TestEnableIsScopedAndShared(t *testing.T) {
	for _, b := range All() {
		if On(b) {
			t.Fatalf("%v is on by default", b)
		}
	}
	release, err := Enable([]Bug{SkipBarrierRound})
	if err != nil {
		t.Fatal(err)
	}
	if !On(SkipBarrierRound) || On(TwoCompactors) {
		t.Fatal("Enable did not plant exactly the requested bug")
	}
	again, err := Enable([]Bug{SkipBarrierRound, SkipBarrierRound})
	if err != nil {
		t.Fatalf("a concurrent run with the same set was refused: %v", err)
	}
	if _, err := Enable([]Bug{TwoCompactors}); err == nil {
		t.Fatal("a concurrent run with another set was admitted")
	}
	release()
	release() // a repeated release counts once
	if !On(SkipBarrierRound) {
		t.Fatal("the switch went off while a run still uses it")
	}
	again()
	if On(SkipBarrierRound) {
		t.Fatal("the switch stayed on after every run released it")
	}
	if _, err := Enable([]Bug{numBugs}); err == nil {
		t.Fatal("Enable accepted an unknown bug")
	}
}
