package barrier

import (
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
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

// ExtraPiece is a piece of a subtask's extras that stays the same over
// several checkpoints (a sink's transaction, from the barrier that closes
// it until it is committed): the first checkpoint that holds it uploads it
// as a blob of its own, and the later ones reference that upload (see
// ExtraFile). Name must never mean two contents within a store run.
type ExtraPiece struct {
	Owner string
	Name  string
	// Data is the content, in parts read back to back. The parts must not
	// change: the upload reads them later, on another goroutine.
	Data [][]byte
}

// Size is the piece's size in bytes.
func (p *ExtraPiece) Size() int64 {
	var n int64
	for _, b := range p.Data {
		n += int64(len(b))
	}
	return n
}

// UploadFile is one upload of a checkpoint: where the content comes from and
// the blob it goes to.
type UploadFile struct {
	Blob   string
	Source string // local path, or "" when Data holds the content
	// Data is the content, in parts read back to back.
	Data [][]byte
	Size int64
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
	// ExtraFiles are the pieces of the extras (DecideExtras): uploads, or
	// placeholders for pieces an earlier checkpoint uploaded.
	ExtraFiles []ExtraFile
	// shared is what the checkpoint contributes to a later reuse base once
	// it is confirmed: its immutable files, uploaded or referenced.
	shared map[fileSlot]baseFile
	// pieces are the extra pieces the checkpoint holds, by owner and name.
	pieces map[fileSlot]heldPiece
}

// UploadBytes is the total size of the decision's uploads.
func (d *Decision) UploadBytes() int64 {
	var n int64
	for _, u := range d.Uploads {
		n += u.Size
	}
	return n
}

// ReusedBytes is the total size of the files and extra pieces the decision
// references instead of uploading.
func (d *Decision) ReusedBytes() int64 {
	var n int64
	for _, t := range d.Tables {
		for _, f := range t.Files {
			if !f.Uploaded {
				n += f.Size
			}
		}
	}
	for _, f := range d.ExtraFiles {
		if !f.Uploaded {
			n += f.Size
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
//
// Extra pieces follow a looser rule (DecideExtras): a piece is referenced
// from any acknowledged checkpoint that uploaded it, confirmed or not, until
// some checkpoint of the store is aborted. The rule for files guards against
// a placeholder naming a blob an abort deleted; a piece's placeholder needs
// less, because a subtask's acknowledgements reach the coordinator in order:
// the acknowledgement that registered the upload comes first, and the
// registry keeps the blob while any checkpoint holds it. A placeholder can
// still name a key an abort has released in between; the registry refuses
// it (that checkpoint aborts), and the abort's notification, or the next
// one, makes the store upload the piece again.
type History struct {
	backendID string
	confirmed CheckpointID // 0: none
	base      map[fileSlot]baseFile
	acked     map[CheckpointID]map[fileSlot]baseFile
	// pieces are the extra pieces later checkpoints reference, by owner and
	// name; ackedPieces holds each acknowledged, unconfirmed checkpoint's.
	pieces      map[fileSlot]heldPiece
	ackedPieces map[CheckpointID]map[fileSlot]heldPiece
}

// heldPiece is an extra piece a checkpoint uploaded or referenced.
type heldPiece struct {
	lineage   string
	size      int64
	crc       uint32
	confirmed bool // a completed checkpoint references it
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
	return &History{backendID: backendID, base: map[fileSlot]baseFile{}, acked: map[CheckpointID]map[fileSlot]baseFile{},
		pieces: map[fileSlot]heldPiece{}, ackedPieces: map[CheckpointID]map[fileSlot]heldPiece{}}, nil
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
			u := UploadFile{Blob: blob, Source: f.Source, Size: f.Size}
			if f.Data != nil {
				u.Data = [][]byte{f.Data}
			}
			d.Uploads = append(d.Uploads, u)
			if f.Immutable {
				d.shared[slot] = baseFile{lineage: lineage, size: f.Size}
			}
		}
		d.Tables = append(d.Tables, ts)
	}
	return d, nil
}

// DecideExtras adds the pieces of the subtask's extras to decision d: a
// piece an acknowledged checkpoint uploaded becomes a placeholder, any other
// an upload of its own. A savepoint uploads every piece. Pieces held before
// and not listed now are forgotten: an owner drops a piece for good (a sink
// commits its oldest transactions first).
func (h *History) DecideExtras(d *Decision, pieces []ExtraPiece) error {
	listed := make(map[fileSlot]heldPiece, len(pieces))
	for i := range pieces {
		p := &pieces[i]
		slot := fileSlot{p.Owner, p.Name}
		if _, dup := listed[slot]; dup {
			return fmt.Errorf("decide %s %d: extra piece %q of %q listed twice", d.Kind, d.ID, p.Name, p.Owner)
		}
		size := p.Size()
		if held, ok := h.pieces[slot]; ok && d.Kind == KindCheckpoint {
			if held.size != size {
				return fmt.Errorf("decide %s %d: extra piece %q of %q has %d bytes, an earlier checkpoint uploaded %d",
					d.Kind, d.ID, p.Name, p.Owner, size, held.size)
			}
			d.ExtraFiles = append(d.ExtraFiles, ExtraFile{Owner: p.Owner, CRC: held.crc,
				FileRef: FileRef{Path: p.Name, Size: size, Lineage: h.lineageField(held.lineage)}})
			listed[slot] = held
			continue
		}
		if err := validElement(p.Owner); err != nil {
			return fmt.Errorf("decide %s %d: extra piece %q: owner: %w", d.Kind, d.ID, p.Name, err)
		}
		if !fs.ValidPath(p.Name) || p.Name == "." {
			return fmt.Errorf("decide %s %d: extra piece of %q: invalid name %q", d.Kind, d.ID, p.Owner, p.Name)
		}
		blob, err := UploadBlobName(d.Kind, d.ID, FileKey{Backend: h.backendID, Table: ExtrasTable, Path: p.Owner + "/" + p.Name})
		if err != nil {
			return fmt.Errorf("decide %s %d: extra piece %q of %q: %w", d.Kind, d.ID, p.Name, p.Owner, err)
		}
		var crc uint32
		for _, b := range p.Data {
			crc = crc32.Update(crc, castagnoli, b)
		}
		d.ExtraFiles = append(d.ExtraFiles, ExtraFile{Owner: p.Owner, CRC: crc,
			FileRef: FileRef{Path: p.Name, Size: size, Blob: blob, Uploaded: true}})
		d.Uploads = append(d.Uploads, UploadFile{Blob: blob, Data: p.Data, Size: size})
		listed[slot] = heldPiece{lineage: h.backendID, size: size, crc: crc}
	}
	for slot := range h.pieces {
		if _, ok := listed[slot]; !ok {
			delete(h.pieces, slot)
		}
	}
	d.pieces = listed
	return nil
}

func (h *History) lineageField(lineage string) string {
	if lineage == h.backendID {
		return ""
	}
	return lineage
}

// Acknowledged records that checkpoint d's uploads all succeeded: once
// confirmed, it becomes the reuse base, and its extra pieces are referenced
// from the next checkpoint on. Savepoints are not recorded.
func (h *History) Acknowledged(d *Decision) {
	if d.Kind != KindCheckpoint {
		return
	}
	if len(d.pieces) > 0 {
		// The acknowledgement that registers these uploads is sent next,
		// before any that may reference them.
		for slot, p := range d.pieces {
			if _, ok := h.pieces[slot]; !ok {
				h.pieces[slot] = p
			}
		}
		h.ackedPieces[d.ID] = d.pieces
	}
	if d.ID <= h.confirmed {
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
	// Every piece a completed checkpoint holds stays registered until a
	// newer completed checkpoint no longer holds it.
	for slot, p := range h.ackedPieces[id] {
		p.confirmed = true
		h.pieces[slot] = p
	}
	for c := range h.ackedPieces {
		if c <= id {
			delete(h.ackedPieces, c)
		}
	}
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

// Forget drops checkpoint id (aborted): it never becomes a reuse base. The
// abort may have released pieces that unconfirmed checkpoints uploaded, so
// the next checkpoint uploads those again; that the notification of an
// abort may be lost is why every abort drops them all, not only id's.
func (h *History) Forget(id CheckpointID) {
	delete(h.acked, id)
	delete(h.ackedPieces, id)
	for slot, p := range h.pieces {
		if !p.confirmed {
			delete(h.pieces, slot)
		}
	}
}

// Acked lists the acknowledged, unconfirmed checkpoints, oldest first.
func (h *History) Acked() []CheckpointID { return slices.Sorted(maps.Keys(h.acked)) }
