package barrier

import (
	"maps"
	"slices"
)

// Retained lists the retained completed checkpoints, oldest first.
func (l *Ledger) Retained() []CheckpointID { return l.retention.IDs() }

// Latest returns the newest completed checkpoint and its metadata blob: the
// one to restore from.
func (l *Ledger) Latest() (CheckpointID, string, bool) {
	id, ok := l.retention.Latest()
	if !ok {
		return 0, "", false
	}
	return id, l.retained[id].name, true
}

// Pending lists the pending checkpoints and savepoints, oldest first.
func (l *Ledger) Pending() []CheckpointID { return slices.Sorted(maps.Keys(l.pending)) }

// Savepoints lists the completed savepoints, oldest first.
func (l *Ledger) Savepoints() []CheckpointID { return slices.Sorted(maps.Keys(l.savepoints)) }

// Entry describes a registered shared file.
func (l *Ledger) Entry(k FileKey) (SharedEntry, bool) { return l.registry.Entry(k) }

// LiveBlobs lists every blob a retained checkpoint, a savepoint or a pending
// checkpoint references, including metadata, sorted. Anything else in the
// store is garbage: the basis of an orphan audit.
func (l *Ledger) LiveBlobs() []string {
	set := make(map[string]struct{})
	for _, b := range l.registry.Blobs() {
		set[b] = struct{}{}
	}
	for b := range l.exclusive {
		set[b] = struct{}{}
	}
	for _, m := range l.retained {
		set[m.name] = struct{}{}
	}
	for _, sp := range l.savepoints {
		set[sp.metadata.name] = struct{}{}
	}
	return slices.Sorted(maps.Keys(set))
}

// live reports whether blob must be kept: something the ledger tracks
// references it, or it belongs to a checkpoint restored without ownership.
func (l *Ledger) live(blob string) bool {
	if l.registry.HasBlob(blob) || l.registry.isExternal(blob) {
		return true
	}
	if _, ok := l.exclusive[blob]; ok {
		return true
	}
	for _, m := range l.retained {
		if m.name == blob {
			return true
		}
	}
	for _, sp := range l.savepoints {
		if sp.metadata.name == blob {
			return true
		}
	}
	return false
}
