package barrier

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/lakestate/lakestate/keygroup"
)

// Validate checks the structural rules of a metadata document: ids and kinds
// are valid, every operator has exactly its parallelism of subtasks, each
// owning the key-group range Flink's assignment gives it, and every file
// names a valid path, size and blob. A savepoint shares nothing, so each of
// its files is its own upload.
func (m *Metadata) Validate() error {
	if m.ID == 0 {
		return fmt.Errorf("checkpoint id is 0")
	}
	if !m.Kind.Valid() {
		return fmt.Errorf("invalid kind %d", m.Kind)
	}
	if m.TimestampMillis < 0 {
		return fmt.Errorf("negative timestamp %d", m.TimestampMillis)
	}
	if m.JobID == "" {
		return fmt.Errorf("empty job id")
	}
	ops := make(map[string]bool, len(m.Operators))
	blobs := make(map[string]bool)
	for i := range m.Operators {
		op := &m.Operators[i]
		if op.ID == "" {
			return fmt.Errorf("operator %d: empty id", i)
		}
		if ops[op.ID] {
			return fmt.Errorf("operator %q: listed twice", op.ID)
		}
		ops[op.ID] = true
		if err := op.validate(m.Kind, blobs); err != nil {
			return fmt.Errorf("operator %q: %w", op.ID, err)
		}
	}
	return nil
}

func (op *OperatorState) validate(kind Kind, blobs map[string]bool) error {
	if err := keygroup.Validate(op.MaxParallelism, op.Parallelism); err != nil {
		return err
	}
	if len(op.Subtasks) != op.Parallelism {
		return fmt.Errorf("%d subtasks for parallelism %d", len(op.Subtasks), op.Parallelism)
	}
	for i := range op.Subtasks {
		s := &op.Subtasks[i]
		if s.Index != i {
			return fmt.Errorf("subtask at position %d has index %d", i, s.Index)
		}
		if want := keygroup.RangeForSubtask(op.MaxParallelism, op.Parallelism, i); s.KeyGroups != want {
			return fmt.Errorf("subtask %d: key groups %v, want %v", i, s.KeyGroups, want)
		}
		if err := s.validate(kind, true); err != nil {
			return fmt.Errorf("subtask %d: %w", i, err)
		}
		if kind != KindSavepoint {
			continue
		}
		var err error
		s.Files(func(k FileKey, f FileRef) {
			if blobs[f.Blob] && err == nil {
				err = fmt.Errorf("subtask %d: table %q: file %q: blob %q appears twice in a savepoint", i, k.Table, k.Path, f.Blob)
			}
			blobs[f.Blob] = true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// validate checks a subtask's tables and files. Unless resolved, a file
// that was not uploaded is a placeholder whose blob the registry fills in.
func (s *SubtaskState) validate(kind Kind, resolved bool) error {
	if s.Backend == "" {
		return fmt.Errorf("empty backend kind")
	}
	if len(s.Tables) > 0 || len(s.ExtraFiles) > 0 {
		if err := validElement(s.BackendID); err != nil {
			return fmt.Errorf("backend id: %w", err)
		}
	}
	tables := make(map[string]bool, len(s.Tables))
	for _, t := range s.Tables {
		if err := validElement(t.Name); err != nil {
			return fmt.Errorf("table name: %w", err)
		}
		if t.Name == ExtrasTable {
			return fmt.Errorf("table name %q is reserved for extra files", t.Name)
		}
		if tables[t.Name] {
			return fmt.Errorf("table %q listed twice", t.Name)
		}
		tables[t.Name] = true
		if err := t.validate(kind, resolved); err != nil {
			return fmt.Errorf("table %q: %w", t.Name, err)
		}
	}
	pieces := make(map[string]bool, len(s.ExtraFiles))
	for _, f := range s.ExtraFiles {
		if err := validElement(f.Owner); err != nil {
			return fmt.Errorf("extra file %q: owner: %w", f.Path, err)
		}
		if pieces[f.Owner+"/"+f.Path] {
			return fmt.Errorf("extra file %q of %q listed twice", f.Path, f.Owner)
		}
		pieces[f.Owner+"/"+f.Path] = true
		if err := f.validate(kind, resolved); err != nil {
			return fmt.Errorf("extra file of %q: %w", f.Owner, err)
		}
	}
	return nil
}

func (t *TableState) validate(kind Kind, resolved bool) error {
	if t.SnapshotID < 0 {
		return fmt.Errorf("negative snapshot id %d", t.SnapshotID)
	}
	paths := make(map[string]bool, len(t.Files))
	for _, f := range t.Files {
		if paths[f.Path] {
			return fmt.Errorf("file %q listed twice", f.Path)
		}
		paths[f.Path] = true
		if err := f.validate(kind, resolved); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one file reference. Unless resolved, a file that was not
// uploaded is a placeholder whose blob the registry fills in.
func (f *FileRef) validate(kind Kind, resolved bool) error {
	if !fs.ValidPath(f.Path) || f.Path == "." {
		return fmt.Errorf("invalid file path %q", f.Path)
	}
	if f.Size < 0 {
		return fmt.Errorf("file %q: negative size %d", f.Path, f.Size)
	}
	if f.Lineage != "" {
		if err := validElement(f.Lineage); err != nil {
			return fmt.Errorf("file %q: lineage: %w", f.Path, err)
		}
	}
	if kind == KindSavepoint && !f.Uploaded {
		return fmt.Errorf("file %q: a savepoint references no earlier upload", f.Path)
	}
	if !resolved && !f.Uploaded {
		return nil
	}
	if err := ValidBlobName(f.Blob); err != nil {
		return fmt.Errorf("file %q: %w", f.Path, err)
	}
	return nil
}

// validElement checks a name used as one element of keys and blob names.
func validElement(s string) error {
	if strings.Contains(s, "/") {
		return fmt.Errorf("%q contains a slash", s)
	}
	return ValidBlobName(s)
}
