package barrier

import (
	"fmt"
	"path"
	"strings"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// Backend kinds, as SubtaskState.Backend records them. A checkpoint restores
// only onto the kind that wrote it.
const (
	BackendMemory = "memory"
	BackendPebble = "pebble"
	BackendPaimon = "paimon"
	// BackendNone is a subtask without keyed state (its extras only).
	BackendNone = "none"
)

// The tables a backend's checkpoint consists of. The memory backend's state
// is one serialized file; a Pebble database's checkpoint is one directory.
const (
	memoryTable = "memory"
	memoryFile  = "state"
	pebbleTable = "pebble"
)

// BackendKind names the kind of a store's backend.
func BackendKind(b subtask.Backend) (string, error) {
	switch b.(type) {
	case *subtask.MemoryBackend:
		return BackendMemory, nil
	case *subtask.PebbleBackend:
		return BackendPebble, nil
	case *subtask.PaimonBackend:
		return BackendPaimon, nil
	}
	return "", fmt.Errorf("no checkpoint support for a %T backend", b)
}

// CheckpointDir is the directory under a subtask's work directory that holds
// checkpoint id's files while they upload: hard links, which nothing modifies
// or deletes meanwhile. The store removes it once the upload is over, and
// every chk-* directory it finds when it starts.
func CheckpointDir(workDir string, id CheckpointID) string {
	return path.Join(workDir, checkpointDirPrefix+id.String())
}

const checkpointDirPrefix = "chk-"

// PebbleCheckpointDirs is the subtask.PebbleOptions.CheckpointDir of a Pebble
// store whose checkpoints a Store actor over workDir takes.
func PebbleCheckpointDirs(workDir string) func(int64) string {
	return func(id int64) string { return CheckpointDir(workDir, CheckpointID(id)) }
}

// immutableFile tells which of a backend's files never change under their
// name and may therefore be shared between checkpoints: Pebble's SSTs and
// blob files, and every file of a paimon checkpoint (uuid-named data, index
// and manifest files, schema-<k> and snapshot-<S>, each written once; the
// LATEST and EARLIEST hints are never part of one). A Pebble MANIFEST grows
// in place and OPTIONS and markers are rewritten, and the memory backend's
// state is new each time.
func immutableFile(backend, _, p string) bool {
	switch backend {
	case BackendPebble:
		return strings.HasSuffix(p, ".sst") || strings.HasSuffix(p, ".blob")
	case BackendPaimon:
		return true
	}
	return false
}

// flushStore is the blocking part of a sync phase, run on the executor while
// the store is lent to the checkpoint: it flushes the write buffer and lists
// the files of the checkpoint. A failure removes chkDir: nothing refers to a
// checkpoint whose file list does not exist.
func flushStore(store *subtask.Store, backend string, id CheckpointID, chkDir string, fio table.FileIO) ([]TableFiles, error) {
	tables, err := flushAndList(store, backend, id, chkDir, fio)
	if err != nil {
		if rmErr := fio.RemoveAll(chkDir); rmErr != nil {
			err = fmt.Errorf("%w (and removing %s: %v)", err, chkDir, rmErr)
		}
		return nil, err
	}
	return tables, nil
}

func flushAndList(store *subtask.Store, backend string, id CheckpointID, chkDir string, fio table.FileIO) ([]TableFiles, error) {
	cp, err := store.Flush(int64(id))
	if err != nil {
		return nil, err
	}
	switch backend {
	case BackendMemory:
		if cp.State == nil {
			return nil, fmt.Errorf("memory backend flushed checkpoint %d without its state", id)
		}
		return []TableFiles{{Name: memoryTable, Files: []StateFile{{
			Table: memoryTable, Path: memoryFile, Size: int64(len(cp.State)), Data: cp.State,
		}}}}, nil
	case BackendPebble:
		if cp.Dir != chkDir {
			return nil, fmt.Errorf("pebble backend checkpointed %d into %q, want %q (set PebbleOptions.CheckpointDir to PebbleCheckpointDirs)", id, cp.Dir, chkDir)
		}
		names, err := fio.List(chkDir)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", chkDir, err)
		}
		t := TableFiles{Name: pebbleTable}
		for _, n := range names {
			src := path.Join(chkDir, n)
			size, err := fio.Stat(src)
			if err != nil {
				return nil, fmt.Errorf("stat %s: %w", src, err)
			}
			t.Files = append(t.Files, StateFile{Table: pebbleTable, Path: n, Size: size, Source: src, Immutable: immutableFile(backend, pebbleTable, n)})
		}
		return []TableFiles{t}, nil
	}
	return nil, fmt.Errorf("no checkpoint support for backend %q", backend)
}
