package barrier

import (
	"bytes"
	"encoding/json"

	"github.com/lakestate/lakestate/keygroup"
)

// Metadata describes one completed checkpoint or savepoint: everything a
// restore needs to find every state file, and nothing about how the job got
// there. It is written once, after every subtask acknowledged, as the
// checkpoint's commit point: a checkpoint without readable metadata did not
// complete.
type Metadata struct {
	ID   CheckpointID `json:"id"`
	Kind Kind         `json:"kind"`
	// TimestampMillis is the trigger time the coordinator's clock gave, in
	// milliseconds since the Unix epoch.
	TimestampMillis int64           `json:"timestamp_ms"`
	JobID           string          `json:"job_id"`
	Operators       []OperatorState `json:"operators"`
}

// OperatorState is the state of one operator, all of its subtasks.
type OperatorState struct {
	// ID is the operator's stable identity across job versions.
	ID             string `json:"id"`
	Name           string `json:"name,omitempty"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"max_parallelism"`
	// Subtasks holds one entry per subtask, indexed by subtask index.
	Subtasks []SubtaskState `json:"subtasks"`
}

// SubtaskState is what one subtask acknowledged for a checkpoint.
type SubtaskState struct {
	Index     int            `json:"index"`
	KeyGroups keygroup.Range `json:"key_groups"`
	// Backend names the store kind that wrote the tables: "paimon",
	// "memory" or "pebble".
	Backend string `json:"backend"`
	// BackendID names the lineage of the files the subtask's store created.
	// Shared-file keys are scoped by it. Every run of a store (a fresh start,
	// each restore) mints a new one, so a file it creates is never taken for
	// another run's file of the same name; files a run adopted keep the
	// lineage they were registered under (FileRef.Lineage).
	BackendID string       `json:"backend_id"`
	Tables    []TableState `json:"tables"`
	// Extras is opaque per-subtask state outside the tables (source offsets,
	// sink transactions, operator watermarks), keyed by its owner.
	Extras map[string]Extra `json:"extras,omitempty"`
	// ExtraFiles continue the extras with pieces kept in blobs of their own:
	// an owner's extras are its Extras bytes followed by the content of each
	// of its extra files, in this order. A piece that several checkpoints
	// hold (a sink's transaction, until it is committed) is uploaded by the
	// first and referenced by the later ones, like an immutable state file,
	// instead of being written into every checkpoint's metadata.
	ExtraFiles []ExtraFile `json:"extra_files,omitempty"`
}

// ExtraFile is one piece of an owner's extras kept in a blob of its own.
// Path names the piece among its owner's, and one name never means two
// contents within a lineage; its shared-file key is the owner and the name
// in the reserved table ExtrasTable.
type ExtraFile struct {
	Owner string `json:"owner"`
	FileRef
	// CRC is the CRC-32C (Castagnoli) of the piece: the blob is outside the
	// metadata file's checksum, so a restore checks it on its own.
	CRC uint32 `json:"crc32c"`
}

// ExtrasTable is the table name of the shared-file keys of extra files; no
// state table may take it.
const ExtrasTable = "_extras"

// Extra is one owner's extras: bytes that may come in parts, which the
// metadata file holds back to back. A writer hands several buffers over
// without joining them (a sink's pending transactions are megabytes each,
// and a join would copy them at every checkpoint); a decoded Extra is one
// part. The parts must not change once handed over: the metadata write
// reads them later, on another goroutine.
type Extra [][]byte

// Len is the extra's size in bytes.
func (e Extra) Len() int {
	n := 0
	for _, p := range e {
		n += len(p)
	}
	return n
}

// Bytes returns the extra as one slice: its only part, or its parts
// joined into a new one.
func (e Extra) Bytes() []byte {
	if len(e) == 1 {
		return e[0]
	}
	return bytes.Join(e, nil)
}

// MarshalJSON encodes the extra as one base64 string, the version 1
// document's form.
func (e Extra) MarshalJSON() ([]byte, error) { return json.Marshal(e.Bytes()) }

// UnmarshalJSON decodes a version 1 document's base64 string.
func (e *Extra) UnmarshalJSON(b []byte) error {
	var v []byte
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Extra{v}
	return nil
}

// TableState is one state table of a subtask at the snapshot the checkpoint
// captured.
type TableState struct {
	Name       string    `json:"name"`
	SnapshotID int64     `json:"snapshot_id"`
	Files      []FileRef `json:"files"`
}

// FileRef is one file of a table and the blob holding its content.
type FileRef struct {
	// Path is relative to the table directory.
	Path string `json:"path"`
	Size int64  `json:"size"`
	Blob string `json:"blob"`
	// Uploaded is true when this checkpoint uploaded Blob, false when it
	// references a blob an earlier checkpoint uploaded. In an
	// acknowledgement, false marks a placeholder: its Blob is resolved by
	// the shared-state registry.
	Uploaded bool `json:"uploaded"`
	// Lineage, when set, scopes the file's shared key instead of the
	// subtask's BackendID: a file adopted from an earlier run keeps the key
	// it was registered under, and a file that changes in place between
	// checkpoints is scoped by its checkpoint so that it is never shared.
	Lineage string `json:"lineage,omitempty"`
}

// Operator returns the state of the operator with the given id.
func (m *Metadata) Operator(id string) (*OperatorState, bool) {
	for i := range m.Operators {
		if m.Operators[i].ID == id {
			return &m.Operators[i], true
		}
	}
	return nil, false
}

// Files calls fn for every file of the subtask with the shared-file key it
// is registered under: the tables' files, then the extra files.
func (s *SubtaskState) Files(fn func(FileKey, FileRef)) {
	for _, t := range s.Tables {
		for _, f := range t.Files {
			fn(s.FileKey(t.Name, f), f)
		}
	}
	for _, f := range s.ExtraFiles {
		fn(s.FileKey(ExtrasTable, FileRef{Path: f.Owner + "/" + f.Path, Lineage: f.Lineage}), f.FileRef)
	}
}

// FileKey is the shared-file key of one of the subtask's files.
func (s *SubtaskState) FileKey(table string, f FileRef) FileKey {
	lineage := s.BackendID
	if f.Lineage != "" {
		lineage = f.Lineage
	}
	return FileKey{Backend: lineage, Table: table, Path: f.Path}
}
