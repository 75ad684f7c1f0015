package barrier_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
	"github.com/lakestate/lakestate/keygroup"
)

func TestWriteAndReadMetadataThroughTheLocalStore(t *testing.T) {
	store, err := blobdir.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &barrier.Metadata{ID: 12, Kind: barrier.KindCheckpoint, TimestampMillis: 5, JobID: "j", Operators: []barrier.OperatorState{{
		ID: "agg", Parallelism: 1, MaxParallelism: 128, Subtasks: []barrier.SubtaskState{{
			KeyGroups: keygroup.RangeForSubtask(128, 1, 0), Backend: "pebble", BackendID: "b",
			Tables: []barrier.TableState{{Name: "db", Files: []barrier.FileRef{{Path: "000001.sst", Size: 9, Blob: "shared/chk-12/b/db/000001.sst", Uploaded: true}}}},
		}},
	}}}
	name, err := barrier.WriteMetadata(t.Context(), store, m)
	if err != nil {
		t.Fatal(err)
	}
	if name != "chk-12/_metadata" {
		t.Fatalf("written to %q", name)
	}
	got, err := barrier.ReadMetadata(t.Context(), store, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 12 || got.Operators[0].Subtasks[0].Tables[0].Files[0].Blob != "shared/chk-12/b/db/000001.sst" {
		t.Fatalf("read back %+v", got)
	}

	if _, err := barrier.ReadMetadata(t.Context(), store, "chk-13/_metadata"); !barrier.IsNotFound(err) {
		t.Fatalf("missing metadata: %v", err)
	}
	if err := store.Put(t.Context(), "chk-14/_metadata", bytes.NewReader([]byte("LKSTCKPT garbage"))); err != nil {
		t.Fatal(err)
	}
	_, err = barrier.ReadMetadata(t.Context(), store, "chk-14/_metadata")
	var me *barrier.MetadataError
	if !errors.As(err, &me) || me.File != "chk-14/_metadata" || barrier.IsTransient(err) {
		t.Fatalf("corrupt metadata: %v", err)
	}
	m.ID = 0
	if _, err := barrier.WriteMetadata(t.Context(), store, m); err == nil {
		t.Fatalf("invalid metadata written")
	}
}
