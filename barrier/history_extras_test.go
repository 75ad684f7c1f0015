package barrier

import (
	"hash/crc32"
	"slices"
	"strings"
	"testing"
)

func pieces(names ...string) []ExtraPiece {
	var out []ExtraPiece
	for _, n := range names {
		out = append(out, ExtraPiece{Owner: "operator", Name: n, Data: [][]byte{[]byte(n), []byte(strings.Repeat("x", len(n)))}})
	}
	return out
}

// decideExtras plans checkpoint id with the given pieces and returns the
// decision and the names of the pieces it uploads.
func decideExtras(t *testing.T, h *History, id CheckpointID, kind Kind, names ...string) (*Decision, []string) {
	t.Helper()
	d, err := h.Decide(id, kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.DecideExtras(d, pieces(names...)); err != nil {
		t.Fatal(err)
	}
	if len(d.ExtraFiles) != len(names) {
		t.Fatalf("%s %d: %d extra files for %d pieces", kind, id, len(d.ExtraFiles), len(names))
	}
	var up []string
	for i, f := range d.ExtraFiles {
		if f.Path != names[i] || f.Owner != "operator" || f.Size != int64(2*len(names[i])) {
			t.Fatalf("%s %d: extra file %+v for piece %q", kind, id, f, names[i])
		}
		if want := crc32.Checksum([]byte(names[i]+strings.Repeat("x", len(names[i]))), castagnoli); f.CRC != want {
			t.Fatalf("%s %d: piece %q has CRC %08x, want %08x", kind, id, names[i], f.CRC, want)
		}
		if f.Uploaded {
			up = append(up, f.Path)
		}
	}
	if len(d.Uploads) != len(up) {
		t.Fatalf("%s %d: %d uploads for %d uploaded pieces", kind, id, len(d.Uploads), len(up))
	}
	return d, up
}

func wantUploads(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s uploads pieces %v, want %v", what, got, want)
	}
}

// A piece is referenced from any acknowledged checkpoint that uploaded it,
// confirmed or not; an abort makes every unconfirmed piece upload again,
// a confirmed one stays referenced; a piece no longer listed is forgotten;
// a savepoint uploads every piece and is never a base.
func TestHistoryExtraPieces(t *testing.T) {
	h, err := NewHistory("b1")
	if err != nil {
		t.Fatal(err)
	}
	d1, up := decideExtras(t, h, 1, KindCheckpoint, "t1")
	wantUploads(t, "checkpoint 1", up, "t1")
	if b := d1.Uploads[0].Blob; b != "shared/chk-1/b1/_extras/operator/t1" || d1.ExtraFiles[0].Blob != b {
		t.Fatalf("piece uploaded to %s", b)
	}
	// Checkpoint 1's upload has not succeeded yet: 2 uploads t1 too.
	d2, up := decideExtras(t, h, 2, KindCheckpoint, "t1", "t2")
	wantUploads(t, "checkpoint 2 (1 not acknowledged)", up, "t1", "t2")
	h.Acknowledged(d1)
	h.Acknowledged(d2)
	d3, up := decideExtras(t, h, 3, KindCheckpoint, "t1", "t2", "t3")
	wantUploads(t, "checkpoint 3", up, "t3")
	h.Acknowledged(d3)
	sp, up := decideExtras(t, h, 4, KindSavepoint, "t1", "t2", "t3")
	wantUploads(t, "savepoint 4", up, "t1", "t2", "t3")
	if !strings.HasPrefix(sp.Uploads[0].Blob, "savepoint-4/") {
		t.Fatalf("savepoint piece uploaded to %s", sp.Uploads[0].Blob)
	}
	h.Acknowledged(sp)
	h.Confirm(2) // t1 and t2 are confirmed; t3 is not
	h.Forget(5)  // some abort
	d6, up := decideExtras(t, h, 6, KindCheckpoint, "t2", "t3", "t4")
	wantUploads(t, "checkpoint 6 (after an abort)", up, "t3", "t4")
	// t1 is no longer listed: a later listing of it is a new piece.
	h.Acknowledged(d6)
	_, up = decideExtras(t, h, 7, KindCheckpoint, "t1", "t2", "t3", "t4")
	wantUploads(t, "checkpoint 7", up, "t1")

	// An acknowledged checkpoint's pieces, forgotten by an abort, are
	// referenced again once it is confirmed.
	h.Forget(8)
	h.Confirm(6)
	_, up = decideExtras(t, h, 9, KindCheckpoint, "t2", "t3", "t4")
	wantUploads(t, "checkpoint 9", up)
}

func TestHistoryRejectsBadPieces(t *testing.T) {
	h, err := NewHistory("b1")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := decideExtras(t, h, 1, KindCheckpoint, "t1")
	h.Acknowledged(d)
	for _, c := range []struct {
		name   string
		pieces []ExtraPiece
		want   string
	}{
		{"twice", append(pieces("t1"), pieces("t1")...), "listed twice"},
		{"changed", []ExtraPiece{{Owner: "operator", Name: "t1", Data: [][]byte{[]byte("other")}}}, "an earlier checkpoint uploaded"},
		{"bad name", []ExtraPiece{{Owner: "operator", Name: "../t", Data: [][]byte{{1}}}}, "invalid name"},
		{"bad owner", []ExtraPiece{{Owner: "a/b", Name: "t", Data: [][]byte{{1}}}}, "contains a slash"},
	} {
		d, err := h.Decide(2, KindCheckpoint, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.DecideExtras(d, c.pieces); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
