package barrier

import (
	"fmt"
	"strconv"
	"strings"
)

// Blob names of a job's checkpoint storage:
//
//	chk-<id>/_metadata                                  checkpoint metadata
//	shared/chk-<id>/<backend-id>/<table>/<path>         a file checkpoint <id> uploaded
//	savepoint-<id>/_metadata                            savepoint metadata
//	savepoint-<id>/<backend-id>/<table>/<path>          a savepoint's file
//
// Shared files live apart from their checkpoint's directory because later
// checkpoints keep referencing them after that checkpoint is subsumed; a
// savepoint directory is self-contained. Every upload has a name no other
// upload uses, so a re-upload never overwrites a blob a completed checkpoint
// references.
const metadataFile = "_metadata"

func dirOf(kind Kind, id CheckpointID) string {
	if kind == KindSavepoint {
		return "savepoint-" + id.String()
	}
	return "chk-" + id.String()
}

// MetadataBlobName is where the metadata of checkpoint or savepoint id lives.
func MetadataBlobName(kind Kind, id CheckpointID) string {
	return dirOf(kind, id) + "/" + metadataFile
}

// ParseMetadataBlobName recognises a name MetadataBlobName produced, so a
// restarted coordinator can find completed checkpoints by listing.
func ParseMetadataBlobName(name string) (Kind, CheckpointID, bool) {
	dir, file, ok := strings.Cut(name, "/")
	if !ok || file != metadataFile {
		return 0, 0, false
	}
	kind, num := KindCheckpoint, ""
	if n, ok := strings.CutPrefix(dir, "chk-"); ok {
		num = n
	} else if n, ok := strings.CutPrefix(dir, "savepoint-"); ok {
		kind, num = KindSavepoint, n
	} else {
		return 0, 0, false
	}
	id, err := strconv.ParseUint(num, 10, 64)
	if err != nil || id == 0 || CheckpointID(id).String() != num {
		return 0, 0, false
	}
	return kind, CheckpointID(id), true
}

// UploadBlobName is the blob a checkpoint or savepoint uploads the file
// (backendID, table, path) to.
func UploadBlobName(kind Kind, id CheckpointID, key FileKey) (string, error) {
	if err := validElement(key.Backend); err != nil {
		return "", fmt.Errorf("backend id: %w", err)
	}
	if kind == KindSavepoint && key.Backend == metadataFile {
		return "", fmt.Errorf("backend id %q collides with the savepoint's metadata", key.Backend)
	}
	if err := validElement(key.Table); err != nil {
		return "", fmt.Errorf("table: %w", err)
	}
	prefix := "shared/" + dirOf(kind, id)
	if kind == KindSavepoint {
		prefix = dirOf(kind, id)
	}
	name := prefix + "/" + key.Backend + "/" + key.Table + "/" + key.Path
	if err := ValidBlobName(name); err != nil {
		return "", err
	}
	return name, nil
}
