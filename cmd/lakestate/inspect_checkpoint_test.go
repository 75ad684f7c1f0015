package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
	"github.com/lakestate/lakestate/keygroup"
)

func TestInspectCheckpoint(t *testing.T) {
	dir := t.TempDir()
	store, err := blobdir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(name string) {
		if err := store.Put(ctx, name, strings.NewReader("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	ckpt := func(id barrier.CheckpointID, files ...barrier.FileRef) {
		for _, f := range files {
			if f.Uploaded {
				put(f.Blob)
			}
		}
		m := &barrier.Metadata{ID: id, Kind: barrier.KindCheckpoint, JobID: "job", Operators: []barrier.OperatorState{{
			ID: "agg", Parallelism: 1, MaxParallelism: 8, Subtasks: []barrier.SubtaskState{{
				KeyGroups: keygroup.RangeForSubtask(8, 1, 0), Backend: "pebble", BackendID: "b1",
				Tables: []barrier.TableState{{Name: "pebble", Files: files}},
			}},
		}}}
		if _, err := barrier.WriteMetadata(ctx, store, m); err != nil {
			t.Fatal(err)
		}
	}
	a := barrier.FileRef{Path: "1.sst", Size: 10, Blob: "shared/chk-1/b1/pebble/1.sst", Uploaded: true}
	ckpt(1, a)
	b := barrier.FileRef{Path: "2.sst", Size: 10, Blob: "shared/chk-2/b1/pebble/2.sst", Uploaded: true}
	ref := a
	ref.Uploaded = false
	ckpt(2, ref, b)
	put("shared/chk-3/b1/pebble/3.sst")

	var out, errOut bytes.Buffer
	if code := run([]string{"inspect", "checkpoint", dir, "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep checkpointReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Checkpoints) != 2 || !slices.Equal(rep.Orphans, []string{"shared/chk-3/b1/pebble/3.sst"}) {
		t.Fatalf("report %+v", rep)
	}
	s2 := rep.Checkpoints[1].Subtasks[0]
	if s2.UploadedFiles != 1 || s2.ReferencedN != 1 || s2.UploadedBytes != 10 || s2.Files[0].Refs != 2 || s2.Files[1].Refs != 1 {
		t.Fatalf("checkpoint 2: %+v", s2)
	}
	out.Reset()
	if code := run([]string{"inspect", "checkpoint", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "orphan") {
		t.Fatalf("text output (exit %d): %s", code, out.String())
	}
}
