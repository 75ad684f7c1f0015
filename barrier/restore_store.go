package barrier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// RestoreInput says what one subtask of a restored job starts from.
type RestoreInput struct {
	Metadata *Metadata
	// Plan is the subtask's share of the operator (see PlanRestore).
	Plan SubtaskRestore
	// Backend is the kind of backend the job runs; a checkpoint written by
	// another kind is refused.
	Backend string
	Blobs   BlobStore
	FileIO  table.FileIO
	// Dir is the subtask's state directory, empty or missing: a Pebble
	// database goes to Dir/db (PebbleDBDir), paimon tables to Dir/paimon
	// (PaimonRoot), rescale sources to Dir/restore-<i>.
	Dir string
	// Pebble configures the restored Pebble database (set CheckpointDir with
	// PebbleCheckpointDirs).
	Pebble subtask.PebbleOptions
	// Paimon configures the restored paimon backend. Its FileIO is FileIO;
	// an aligned restore keeps the checkpoint's bucket count.
	Paimon subtask.PaimonOptions
	// BackendID is the lineage of the files the restored store creates; it
	// must be new (NewBackendID).
	BackendID string
}

// RestoredStore is a subtask's backend rebuilt from a checkpoint.
type RestoredStore struct {
	// Backend holds the adopted state (aligned restore) or is empty and
	// filled by Finish (rescale).
	Backend   subtask.Backend
	KeyGroups keygroup.Range
	Aligned   bool
	// History is the reuse history of the new store run: after an aligned
	// restore from a checkpoint its base is the checkpoint's files, so the
	// first checkpoint after the restore is incremental.
	History *History
	// BytesRead counts the bytes downloaded.
	BytesRead int64
	sources   []restoredSource
}

type restoredSource struct {
	backend subtask.Backend
	dir     string // "" for in-memory sources
}

// PebbleDBDir is where a restored subtask's Pebble database lives.
func PebbleDBDir(dir string) string { return path.Join(dir, "db") }

// RestoreSubtask rebuilds one subtask's backend. An aligned restore adopts
// the single source's files wholesale and keeps its incremental history; a
// rescale opens every source (downloaded to its own directory) and leaves the
// copy of the subtask's key groups to Finish, which needs the store's states
// registered.
func RestoreSubtask(ctx context.Context, in RestoreInput) (*RestoredStore, error) {
	m := in.Metadata
	h, err := NewHistory(in.BackendID)
	if err != nil {
		return nil, err
	}
	out := &RestoredStore{KeyGroups: in.Plan.KeyGroups, Aligned: in.Plan.Aligned, History: h}
	for _, src := range in.Plan.Sources {
		if b := src.State.Backend; b != in.Backend && b != BackendNone {
			return nil, fmt.Errorf("restore of %s %d: subtask %d was written by the %s backend and this job runs the %s backend: state cannot move between backends",
				m.Kind, m.ID, src.State.Index, b, in.Backend)
		}
	}
	var states []*SubtaskState
	for _, src := range in.Plan.Sources {
		if src.State.Backend != BackendNone {
			states = append(states, src.State)
		}
	}
	fail := func(err error) (*RestoredStore, error) {
		out.Close()
		if out.Backend != nil {
			out.Backend.Close()
		}
		return nil, fmt.Errorf("restore of %s %d, subtask %d: %w", m.Kind, m.ID, in.Plan.Subtask, err)
	}
	if in.Plan.Aligned && len(states) == 1 {
		out.Backend, err = openRestored(ctx, in, states[0], backendDir(in.Backend, in.Dir), in.Pebble, &out.BytesRead)
		if err != nil {
			return fail(err)
		}
		if m.Kind == KindCheckpoint {
			if err := h.Adopt(m.ID, m.Kind, states[0], func(t, p string) bool { return immutableFile(in.Backend, t, p) }); err != nil {
				return fail(err)
			}
		}
		return out, nil
	}
	for i, st := range states {
		dir := path.Join(in.Dir, fmt.Sprintf("restore-%d", i))
		b, err := openRestored(ctx, in, st, dir, subtask.PebbleOptions{FS: in.Pebble.FS}, &out.BytesRead)
		if err != nil {
			return fail(err)
		}
		src := restoredSource{backend: b}
		if in.Backend != BackendMemory {
			src.dir = dir
		}
		out.sources = append(out.sources, src)
	}
	out.Backend, err = newBackend(in)
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// Finish completes a rescale once the store over Backend has its states
// registered: it copies the rows of the subtask's key groups from every
// source (one commit; on the paimon backend a bulk load of each table's top
// level, which reads at once) and releases the sources. After an aligned
// restore it does nothing. The restored store's first barrier uploads everything: the copied
// rows live in new files.
func (r *RestoredStore) Finish(store *subtask.Store, fio table.FileIO) error {
	if len(r.sources) == 0 {
		return nil
	}
	backends := make([]subtask.Backend, len(r.sources))
	for i, s := range r.sources {
		backends[i] = s.backend
	}
	err := store.Clip(backends, r.KeyGroups)
	var errs []error
	for _, s := range r.sources {
		errs = append(errs, s.backend.Close())
		if s.dir != "" {
			errs = append(errs, fio.RemoveAll(s.dir))
		}
	}
	r.sources = nil
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// Close releases the rescale sources without copying (a restore abandoned
// halfway). The directories stay; the caller removes the subtask's Dir.
func (r *RestoredStore) Close() {
	for _, s := range r.sources {
		s.backend.Close()
	}
	r.sources = nil
}

// newBackend opens the empty backend a rescale fills.
func newBackend(in RestoreInput) (subtask.Backend, error) {
	switch in.Backend {
	case BackendMemory:
		return subtask.NewMemory(), nil
	case BackendPebble:
		return subtask.OpenPebble(PebbleDBDir(in.Dir), in.Pebble)
	case BackendPaimon:
		return subtask.OpenPaimon(PaimonRoot(in.Dir), paimonOptions(in))
	}
	return nil, fmt.Errorf("no restore support for the %q backend", in.Backend)
}

// backendDir is where the backend of kind lives in a subtask's directory.
func backendDir(kind, dir string) string {
	if kind == BackendPaimon {
		return PaimonRoot(dir)
	}
	return PebbleDBDir(dir)
}

// openRestored downloads one subtask state and opens it as a backend.
func openRestored(ctx context.Context, in RestoreInput, st *SubtaskState, dir string, opts subtask.PebbleOptions, read *int64) (subtask.Backend, error) {
	switch in.Backend {
	case BackendMemory:
		f, err := singleFile(st, memoryTable, memoryFile)
		if err != nil {
			return nil, err
		}
		data, err := readBlob(ctx, in.Blobs, f)
		if err != nil {
			return nil, err
		}
		*read += int64(len(data))
		return subtask.RestoreMemory(f.Blob, data)
	case BackendPebble:
		if len(st.Tables) != 1 || st.Tables[0].Name != pebbleTable {
			return nil, fmt.Errorf("subtask %d: a pebble checkpoint has the one table %q", st.Index, pebbleTable)
		}
		for _, f := range st.Tables[0].Files {
			n, err := download(ctx, in.Blobs, in.FileIO, f, path.Join(dir, f.Path))
			*read += n
			if err != nil {
				return nil, err
			}
		}
		return subtask.OpenPebble(dir, opts)
	case BackendPaimon:
		return openPaimonRestored(ctx, in, st, dir, read)
	}
	return nil, fmt.Errorf("no restore support for the %q backend", in.Backend)
}

func singleFile(st *SubtaskState, tableName, file string) (FileRef, error) {
	if len(st.Tables) != 1 || st.Tables[0].Name != tableName || len(st.Tables[0].Files) != 1 || st.Tables[0].Files[0].Path != file {
		return FileRef{}, fmt.Errorf("subtask %d: a %s checkpoint has the one file %s/%s", st.Index, tableName, tableName, file)
	}
	return st.Tables[0].Files[0], nil
}

func readBlob(ctx context.Context, blobs BlobStore, f FileRef) ([]byte, error) {
	rc, err := blobs.Get(ctx, f.Blob)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Blob, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("blob %s has %d bytes, the checkpoint says %d", f.Blob, len(data), f.Size)
	}
	return data, nil
}

// download copies one blob to a local file, synced, and checks its size.
func download(ctx context.Context, blobs BlobStore, fio table.FileIO, f FileRef, dst string) (int64, error) {
	rc, err := blobs.Get(ctx, f.Blob)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	w, err := fio.Create(dst)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, rc)
	if err == nil && n != f.Size {
		err = fmt.Errorf("blob %s has %d bytes, the checkpoint says %d", f.Blob, n, f.Size)
	}
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("download %s to %s: %w", f.Blob, dst, err)
	}
	return n, nil
}
