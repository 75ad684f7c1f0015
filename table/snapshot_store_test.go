package table

import (
	"os"
	"path/filepath"
	"testing"
)

// Hints are trusted only as Paimon trusts them; otherwise the listing decides.
func TestSnapshotHintsAreOnlyHints(t *testing.T) {
	tbl := newCommitTestTable(t, nil)
	for id := int64(1); id <= 4; id++ {
		if _, err := tbl.CommitAppend(nil, commitInfo("w", id)); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tbl.Dir(), "snapshot")
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Noise a listing must ignore.
	write(".snapshot-9.abc.tmp", "x")
	write("snapshot-x", "x")
	write("snapshot-", "x")
	write("snapshot--3", "x")
	for _, tc := range []struct {
		latest, earliest string
		wantLatest       int64
		wantEarliest     int64
	}{
		{"4", "1", 4, 1},
		{"2", "3", 4, 3},       // stale LATEST: snapshot-3 exists; EARLIEST=3 exists and is trusted
		{"garbage", "9", 4, 1}, // unparsable LATEST, EARLIEST of a missing snapshot
		{"", "", 4, 1},
		{"4\n", " 1 ", 4, 1}, // whitespace is tolerated on read
	} {
		write("LATEST", tc.latest)
		write("EARLIEST", tc.earliest)
		l, ok, err := tbl.LatestSnapshotID()
		if err != nil || !ok || l != tc.wantLatest {
			t.Errorf("LATEST %q: %d %v %v", tc.latest, l, ok, err)
		}
		e, ok, err := tbl.EarliestSnapshotID()
		if err != nil || !ok || e != tc.wantEarliest {
			t.Errorf("EARLIEST %q: %d %v %v", tc.earliest, e, ok, err)
		}
	}
	// What we write has no newline.
	if _, err := tbl.CommitAppend(nil, commitInfo("w", 5)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "LATEST")); string(b) != "5" {
		t.Fatalf("LATEST %q", b)
	}
	empty := newCommitTestTable(t, nil)
	if _, ok, err := empty.LatestSnapshotID(); ok || err != nil {
		t.Fatalf("empty table: %v %v", ok, err)
	}
}
