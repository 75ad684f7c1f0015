package barrier

import (
	"strings"
	"testing"
)

func sstTables(sizes map[string]int64) []TableFiles {
	t := TableFiles{Name: "pebble"}
	for _, p := range []string{"1.sst", "2.sst", "3.sst", "4.sst", "MANIFEST-1"} {
		if s, ok := sizes[p]; ok {
			t.Files = append(t.Files, StateFile{Table: "pebble", Path: p, Size: s, Source: "/chk/" + p, Immutable: strings.HasSuffix(p, ".sst")})
		}
	}
	return []TableFiles{t}
}

func placeholders(d *Decision) []string {
	var out []string
	for _, t := range d.Tables {
		for _, f := range t.Files {
			if !f.Uploaded {
				out = append(out, f.Path)
			}
		}
	}
	return out
}

func mustDecide(t *testing.T, h *History, id CheckpointID, kind Kind, files map[string]int64) *Decision {
	t.Helper()
	d, err := h.Decide(id, kind, sstTables(files))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestHistoryReusesOnlyConfirmedCheckpoints(t *testing.T) {
	h, err := NewHistory("b1")
	if err != nil {
		t.Fatal(err)
	}
	d1 := mustDecide(t, h, 1, KindCheckpoint, map[string]int64{"1.sst": 10, "MANIFEST-1": 5})
	if len(placeholders(d1)) != 0 || len(d1.Uploads) != 2 {
		t.Fatalf("first checkpoint: %+v", d1)
	}
	if d1.Uploads[1].Blob != "shared/chk-1/b1.chk-1/pebble/MANIFEST-1" || d1.Tables[0].Files[1].Lineage != "b1.chk-1" {
		t.Fatalf("a file that changes in place is not scoped by its checkpoint: %+v", d1.Tables[0].Files[1])
	}
	h.Acknowledged(d1)
	// Not confirmed yet: checkpoint 2 uploads everything again.
	d2 := mustDecide(t, h, 2, KindCheckpoint, map[string]int64{"1.sst": 10, "2.sst": 20, "MANIFEST-1": 6})
	if len(placeholders(d2)) != 0 {
		t.Fatalf("checkpoint 2 reuses unconfirmed files: %v", placeholders(d2))
	}
	h.Acknowledged(d2)
	if !h.Confirm(1) || h.Confirmed() != 1 {
		t.Fatal("confirm 1")
	}
	d3 := mustDecide(t, h, 3, KindCheckpoint, map[string]int64{"1.sst": 10, "2.sst": 20, "3.sst": 30, "MANIFEST-1": 7})
	if got := placeholders(d3); len(got) != 1 || got[0] != "1.sst" {
		t.Fatalf("checkpoint 3 placeholders %v, want [1.sst]", got)
	}
	if d3.UploadBytes() != 20+30+7 || d3.ReusedBytes() != 10 {
		t.Fatalf("checkpoint 3 uploads %d, reuses %d", d3.UploadBytes(), d3.ReusedBytes())
	}
	// Checkpoint 2 is aborted: its files never become a base.
	h.Forget(2)
	if h.Confirm(2) {
		t.Fatal("a forgotten checkpoint became the base")
	}
	h.Acknowledged(d3)
	// A savepoint is never recorded and its notification moves nothing.
	sp := mustDecide(t, h, 4, KindSavepoint, map[string]int64{"1.sst": 10, "3.sst": 30, "MANIFEST-1": 8})
	if len(placeholders(sp)) != 0 || !strings.HasPrefix(sp.Uploads[0].Blob, "savepoint-4/") {
		t.Fatalf("savepoint: %+v", sp)
	}
	h.Acknowledged(sp)
	if h.Confirm(4) {
		t.Fatal("a savepoint notification moved the base")
	}
	if !h.Confirm(3) || h.Confirm(3) || h.Confirm(1) {
		t.Fatal("confirm 3 once, and never back to 1")
	}
	d5 := mustDecide(t, h, 5, KindCheckpoint, map[string]int64{"1.sst": 10, "3.sst": 30, "4.sst": 40, "MANIFEST-1": 9})
	if got := placeholders(d5); len(got) != 2 {
		t.Fatalf("checkpoint 5 placeholders %v", got)
	}
	if len(h.Acked()) != 0 {
		t.Fatalf("acked %v after confirming 3", h.Acked())
	}
}

func TestHistoryRejectsChangedImmutableFile(t *testing.T) {
	h, _ := NewHistory("b1")
	d := mustDecide(t, h, 1, KindCheckpoint, map[string]int64{"1.sst": 10})
	h.Acknowledged(d)
	h.Confirm(1)
	if _, err := h.Decide(2, KindCheckpoint, sstTables(map[string]int64{"1.sst": 11})); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changed immutable file: %v", err)
	}
}

func TestHistoryAdoptKeepsLineage(t *testing.T) {
	state := &SubtaskState{BackendID: "old", Tables: []TableState{{Name: "pebble", Files: []FileRef{
		{Path: "1.sst", Size: 10, Blob: "shared/chk-4/old/pebble/1.sst"},
		{Path: "2.sst", Size: 20, Blob: "shared/chk-2/older/pebble/2.sst", Lineage: "older"},
		{Path: "MANIFEST-1", Size: 5, Blob: "shared/chk-4/old.chk-4/pebble/MANIFEST-1", Lineage: "old.chk-4"},
	}}}}
	h, _ := NewHistory("new")
	if err := h.Adopt(4, KindCheckpoint, state, func(_, p string) bool { return strings.HasSuffix(p, ".sst") }); err != nil {
		t.Fatal(err)
	}
	d := mustDecide(t, h, 5, KindCheckpoint, map[string]int64{"1.sst": 10, "2.sst": 20, "3.sst": 30, "MANIFEST-1": 6})
	files := d.Tables[0].Files
	if files[0].Uploaded || files[0].Lineage != "old" || files[1].Uploaded || files[1].Lineage != "older" {
		t.Fatalf("adopted files: %+v", files[:2])
	}
	if !files[2].Uploaded || files[2].Lineage != "" || !strings.HasPrefix(files[2].Blob, "shared/chk-5/new/") {
		t.Fatalf("new file: %+v", files[2])
	}
	s := SubtaskState{BackendID: "new", Tables: d.Tables}
	if k := s.FileKey("pebble", files[1]); k.Backend != "older" {
		t.Fatalf("key of an adopted file: %+v", k)
	}
	if err := h.Adopt(6, KindCheckpoint, state, nil); err == nil {
		t.Fatal("adopt into a used history")
	}
	if h2, _ := NewHistory("x"); h2.Adopt(4, KindSavepoint, state, nil) == nil {
		t.Fatal("a savepoint adopted as a reuse base")
	}
}
