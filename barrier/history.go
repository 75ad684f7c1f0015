package barrier

import (
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/lakestate/lakestate/internal/plant"
)

// StateFile is one file of a store's checkpoint, as its backend lists it at
// the end of the sync phase.
type StateFile struct {
	Table string
	// Path is relative to the table's directory; a restore puts the file
	// back there.
	Path string
	Size int64
	// Source is the local file an upload reads: a hard link in the
	// checkpoint's chk-<id>/ directory, which nothing modifies or deletes
	// while the upload runs. Empty when Data holds the content.
	Source string
	// Data is the content of a file that exists only in memory (the memory
	// backend's serialized state).
	Data []byte
	// Immutable marks a file whose name the store's lineage never reuses for
	// other content (a Pebble SST, a Paimon data or manifest file): a later
	// checkpoint may reference its upload. Anything else is uploaded by every
	// checkpoint that contains it.
	Immutable bool
}

// TableFiles is one table of a store's checkpoint.
type TableFiles struct {
	Name       string
	SnapshotID int64
	Files      []StateFile
}

// UploadFile is one upload of a checkpoint: where the content comes from and
// the blob it goes to.
type UploadFile struct {
	Blob   string
	Source string // local path, or "" when Data holds the content
	Data   []byte
	Size   int64
}

// Decision is a store's plan for one checkpoint: the tables as its
// acknowledgement will describe them (placeholders for files the last
// confirmed checkpoint registered, uploads for the rest) and exactly the
// files to upload.
type Decision struct {
	ID      CheckpointID
	Kind    Kind
	Tables  []TableState
	Uploads []UploadFile
	// shared is what the checkpoint contributes to a later reuse base once
	// it is confirmed: its immutable files, uploaded or referenced.
	shared map[fileSlot]baseFile
}

// UploadBytes is the total size of the decision's uploads.
func (d *Decision) UploadBytes() int64 {
	var n int64
	for _, u := range d.Uploads {
		n += u.Size
	}
	return n
}

// ReusedBytes is the total size of the files the decision references
// instead of uploading.
func (d *Decision) ReusedBytes() int64 {
	var n int64
	for _, t := range d.Tables {
		for _, f := range t.Files {
			if !f.Uploaded {
				n += f.Size
			}
		}
	}
	return n
}

// fileSlot is a file's place in the store: a table and a path in it.
type fileSlot struct{ table, path string }

// baseFile is a shared file a checkpoint registered: the lineage its key is
// scoped by, and its size.
type baseFile struct {
	lineage string
	size    int64
}

// History is one store's memory of its checkpoints, the reuse rule of
// incremental checkpoints as a pure state machine (Flink's incremental
// snapshot bookkeeping):
//
//   - the reuse base is the immutable files of the last checkpoint the
//     coordinator confirmed to this store; a new checkpoint references those
//     by placeholder and uploads everything else;
//   - a checkpoint enters the history only after its uploads succeeded
//     (Acknowledged), so a failed upload is never a base;
//   - Confirm advances the base only to a newer checkpoint the history holds,
//     so a savepoint's notification (savepoints are never recorded) or a late
//     notification does not move it;
//   - Forget drops an aborted checkpoint, which then can never become a base.
//
// A store run scopes the keys of the files it creates by its own BackendID.
// Files adopted on restore keep the lineage they were registered under, and
// files that are not immutable are scoped by their checkpoint, so no two
// different contents ever share a key.
type History struct {
	backendID string
	confirmed CheckpointID // 0: none
	base      map[fileSlot]baseFile
	acked     map[CheckpointID]map[fileSlot]baseFile
}

// NewBackendID mints the lineage id of a new store run from 8 bytes of
// entropy. Runs must never repeat an id: production passes crypto/rand's
// Reader; a simulation passes a seeded stream, distinct per run.
func NewBackendID(entropy io.Reader) (string, error) {
	var b [8]byte
	if _, err := io.ReadFull(entropy, b[:]); err != nil {
		return "", fmt.Errorf("backend id: %w", err)
	}
	return "b" + hex.EncodeToString(b[:]), nil
}

// NewHistory returns the empty history of a store run whose files are scoped
// by backendID.
func NewHistory(backendID string) (*History, error) {
	if err := validElement(backendID); err != nil {
		return nil, fmt.Errorf("backend id: %w", err)
	}
	return &History{backendID: backendID, base: map[fileSlot]baseFile{}, acked: map[CheckpointID]map[fileSlot]baseFile{}}, nil
}

// BackendID is the lineage of the files this store run creates.
func (h *History) BackendID() string { return h.backendID }

// Confirmed is the checkpoint the reuse base comes from (0: none).
func (h *History) Confirmed() CheckpointID { return h.confirmed }

// BaseLen is the number of files in the reuse base.
func (h *History) BaseLen() int { return len(h.base) }

// Adopt seeds the history with the checkpoint a store was restored from
// without rescaling: its immutable files (as immutable tells) form the reuse
// base, under the keys they were registered with, so the first checkpoint
// after the restore is incremental. Savepoints register nothing and must not
// be adopted.
func (h *History) Adopt(id CheckpointID, kind Kind, s *SubtaskState, immutable func(table, path string) bool) error {
	if kind != KindCheckpoint {
		return fmt.Errorf("adopt %s %d: only checkpoints can be a reuse base", kind, id)
	}
	if h.confirmed != 0 || len(h.acked) != 0 {
		return fmt.Errorf("adopt checkpoint %d: the history is not empty", id)
	}
	base := map[fileSlot]baseFile{}
	for _, t := range s.Tables {
		for _, f := range t.Files {
			if immutable(t.Name, f.Path) {
				base[fileSlot{t.Name, f.Path}] = baseFile{lineage: s.FileKey(t.Name, f).Backend, size: f.Size}
			}
		}
	}
	h.confirmed, h.base = id, base
	return nil
}

// privateLineage scopes a file that is not immutable to checkpoint id.
func (h *History) privateLineage(id CheckpointID) string {
	return h.backendID + ".chk-" + id.String()
}

// Decide plans checkpoint or savepoint id over the files of the store's
// tables. A savepoint uploads every file to its own directory and references
// nothing. An immutable file present in the base with another size is a
// broken invariant (a name reused for other content) and fails the decision.
func (h *History) Decide(id CheckpointID, kind Kind, tables []TableFiles) (*Decision, error) {
	if !kind.Valid() || id == 0 {
		return nil, fmt.Errorf("decide %s %d: invalid checkpoint", kind, id)
	}
	d := &Decision{ID: id, Kind: kind, shared: map[fileSlot]baseFile{}}
	for _, t := range tables {
		ts := TableState{Name: t.Name, SnapshotID: t.SnapshotID, Files: make([]FileRef, 0, len(t.Files))}
		for _, f := range t.Files {
			if (f.Source == "") == (f.Data == nil) {
				return nil, fmt.Errorf("decide %s %d: table %q file %q: exactly one of Source and Data must be set", kind, id, t.Name, f.Path)
			}
			slot := fileSlot{t.Name, f.Path}
			lineage := h.backendID
			if !f.Immutable {
				lineage = h.privateLineage(id)
			}
			if b, ok := h.base[slot]; ok && f.Immutable {
				if b.size != f.Size {
					return nil, fmt.Errorf("decide %s %d: table %q file %q is immutable but has %d bytes, checkpoint %d registered %d",
						kind, id, t.Name, f.Path, f.Size, h.confirmed, b.size)
				}
				lineage = b.lineage
				if kind == KindCheckpoint {
					ts.Files = append(ts.Files, FileRef{Path: f.Path, Size: f.Size, Lineage: h.lineageField(lineage)})
					d.shared[slot] = b
					continue
				}
			}
			blob, err := UploadBlobName(kind, id, FileKey{Backend: lineage, Table: t.Name, Path: f.Path})
			if err != nil {
				return nil, fmt.Errorf("decide %s %d: table %q file %q: %w", kind, id, t.Name, f.Path, err)
			}
			ts.Files = append(ts.Files, FileRef{Path: f.Path, Size: f.Size, Blob: blob, Uploaded: true, Lineage: h.lineageField(lineage)})
			d.Uploads = append(d.Uploads, UploadFile{Blob: blob, Source: f.Source, Data: f.Data, Size: f.Size})
			if f.Immutable {
				d.shared[slot] = baseFile{lineage: lineage, size: f.Size}
			}
		}
		d.Tables = append(d.Tables, ts)
	}
	return d, nil
}

func (h *History) lineageField(lineage string) string {
	if lineage == h.backendID {
		return ""
	}
	return lineage
}

// Acknowledged records that checkpoint d's uploads all succeeded: once
// confirmed, it becomes the reuse base. Savepoints are not recorded.
func (h *History) Acknowledged(d *Decision) {
	if d.Kind != KindCheckpoint || d.ID <= h.confirmed {
		return
	}
	h.acked[d.ID] = d.shared
	if plant.On(plant.ReuseUnconfirmed) {
		h.confirmed, h.base = d.ID, d.shared
	}
}

// Confirm handles the notification that checkpoint id completed and reports
// whether the base moved to it. Only a newer checkpoint this store
// acknowledged can become the base; older acknowledged ones are dropped.
func (h *History) Confirm(id CheckpointID) bool {
	shared, ok := h.acked[id]
	if !ok || id <= h.confirmed {
		return false
	}
	h.confirmed, h.base = id, shared
	for c := range h.acked {
		if c <= id {
			delete(h.acked, c)
		}
	}
	return true
}

// Forget drops checkpoint id (aborted): it never becomes a reuse base.
func (h *History) Forget(id CheckpointID) { delete(h.acked, id) }

// Acked lists the acknowledged, unconfirmed checkpoints, oldest first.
func (h *History) Acked() []CheckpointID { return slices.Sorted(maps.Keys(h.acked)) }
