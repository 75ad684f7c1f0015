package barrier

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Registry is the coordinator's shared-state registry: for every shared file
// key, the blob registered for it, which checkpoints reference it, and
// whether a completed checkpoint includes it (confirmed). It is a pure state
// machine; it deletes nothing itself but reports exactly which blobs became
// unreferenced.
//
// Registration follows Flink's SharedStateRegistry case by case:
//
//   - an unknown key is registered; a placeholder for an unknown key is an
//     error, so a placeholder can never resurrect a deleted file;
//   - a placeholder, or the registered blob itself, for a known key adds a
//     reference;
//   - a different upload for a confirmed key is a re-upload made while
//     confirmation was delayed: the registry keeps the confirmed blob and
//     discards the new one;
//   - a different upload for an unconfirmed key replaces it and discards the
//     old blob: after a failover a store may recreate a file of the same name
//     with different content, and a completed checkpoint must not point at
//     the stale one.
//
// It is stricter than Flink where Flink would silently pick wrong content:
// a placeholder or re-upload whose size differs from the confirmed file, and
// two different uploads for one key within one checkpoint, are
// ErrConflictingSharedFile. Confirmation is exact: a key is confirmed once
// any completed checkpoint references it (Flink approximates this with the
// last checkpoint that used the key). Blobs are counted per key, so two keys
// may share one blob (files adopted by reference after a rescale); a blob is
// reported for deletion only when no key holds it.
type Registry struct {
	entries      map[FileKey]*sharedEntry
	byCheckpoint map[CheckpointID]map[FileKey]struct{}
	blobUsers    map[string]int      // live entries per blob
	external     map[string]struct{} // blobs restored without ownership: never deleted
}

type sharedEntry struct {
	blob      string
	size      int64
	createdBy CheckpointID // the checkpoint that uploaded blob
	refs      map[CheckpointID]struct{}
	confirmed bool
}

// SharedEntry is a read-only view of a registered key.
type SharedEntry struct {
	Blob       string
	Size       int64
	CreatedBy  CheckpointID
	Confirmed  bool
	References []CheckpointID // sorted
}

var (
	// ErrUnknownSharedFile: a placeholder names a key nothing registered.
	ErrUnknownSharedFile = errors.New("placeholder for an unknown shared file")
	// ErrConflictingSharedFile: two different files claim one key.
	ErrConflictingSharedFile = errors.New("conflicting content for a shared file")
)

// Registration is the outcome of registering one acknowledgement.
type Registration struct {
	// Resolved holds the registered refs in input order: Blob is the blob
	// registered for the key, and Placeholder is false only where that blob
	// is this checkpoint's own upload.
	Resolved []SharedRef
	// Discard lists uploads nothing references any more (sorted): discarded
	// re-uploads and replaced unconfirmed blobs.
	Discard []string
	// Invalidated lists other, still pending checkpoints that referenced a
	// replaced blob (sorted). They can never complete and must be aborted.
	Invalidated []CheckpointID
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		entries:      make(map[FileKey]*sharedEntry),
		byCheckpoint: make(map[CheckpointID]map[FileKey]struct{}),
		blobUsers:    make(map[string]int),
		external:     make(map[string]struct{}),
	}
}

// Register records that checkpoint id references refs. It is atomic: on an
// error nothing changes.
func (r *Registry) Register(id CheckpointID, refs []SharedRef) (Registration, error) {
	if err := r.checkRegister(id, refs); err != nil {
		return Registration{}, err
	}
	var (
		out         = Registration{Resolved: make([]SharedRef, len(refs))}
		candidates  []string
		invalidated = make(map[CheckpointID]struct{})
	)
	for i, ref := range refs {
		e := r.entries[ref.Key]
		switch {
		case e == nil:
			e = r.newEntry(ref, id)
		case ref.Placeholder || e.blob == ref.Blob:
			// The normal incremental case, or a repeated acknowledgement.
		case e.confirmed:
			candidates = append(candidates, ref.Blob)
		default:
			candidates = append(candidates, e.blob)
			for c := range e.refs {
				if c != id {
					invalidated[c] = struct{}{}
				}
			}
			r.setBlob(e, ref.Blob, ref.Size, id)
		}
		r.addRef(ref.Key, e, id)
		out.Resolved[i] = SharedRef{Key: ref.Key, Size: e.size, Blob: e.blob, Placeholder: e.createdBy != id}
	}
	out.Discard = r.unreferenced(candidates)
	out.Invalidated = slices.Sorted(maps.Keys(invalidated))
	return out, nil
}

func (r *Registry) checkRegister(id CheckpointID, refs []SharedRef) error {
	if id == 0 {
		return fmt.Errorf("register: checkpoint id 0")
	}
	seen := make(map[FileKey]struct{}, len(refs))
	for _, ref := range refs {
		if _, dup := seen[ref.Key]; dup {
			return fmt.Errorf("checkpoint %d: shared file %s listed twice", id, ref.Key)
		}
		seen[ref.Key] = struct{}{}
		e := r.entries[ref.Key]
		if ref.Placeholder {
			if e == nil {
				return fmt.Errorf("checkpoint %d: %w %s", id, ErrUnknownSharedFile, ref.Key)
			}
			if e.size != ref.Size {
				return fmt.Errorf("checkpoint %d: %w %s: placeholder of %d bytes for a file of %d bytes", id, ErrConflictingSharedFile, ref.Key, ref.Size, e.size)
			}
			continue
		}
		if err := ValidBlobName(ref.Blob); err != nil {
			return fmt.Errorf("checkpoint %d: shared file %s: %w", id, ref.Key, err)
		}
		if e == nil {
			continue
		}
		_, mine := e.refs[id]
		switch {
		case e.blob == ref.Blob && e.size != ref.Size:
			return fmt.Errorf("checkpoint %d: %w %s: blob %s registered with %d bytes, now %d", id, ErrConflictingSharedFile, ref.Key, ref.Blob, e.size, ref.Size)
		case e.blob == ref.Blob:
		case e.confirmed && e.size != ref.Size:
			return fmt.Errorf("checkpoint %d: %w %s: re-upload of %d bytes for a confirmed file of %d bytes", id, ErrConflictingSharedFile, ref.Key, ref.Size, e.size)
		case !e.confirmed && mine:
			return fmt.Errorf("checkpoint %d: %w %s: uploaded twice as %s and %s", id, ErrConflictingSharedFile, ref.Key, e.blob, ref.Blob)
		}
	}
	return nil
}

// Restore registers the files of a checkpoint that completed before this
// registry existed (a job restart), confirmed. Unless owned, its blobs belong
// to someone else (a restore in no-claim mode) and are never reported for
// deletion. Restoring several retained checkpoints must happen oldest first.
func (r *Registry) Restore(id CheckpointID, refs []SharedRef, owned bool) error {
	if id == 0 {
		return fmt.Errorf("restore: checkpoint id 0")
	}
	if _, ok := r.byCheckpoint[id]; ok {
		return fmt.Errorf("restore: checkpoint %d already registered", id)
	}
	seen := make(map[FileKey]struct{}, len(refs))
	for _, ref := range refs {
		if _, dup := seen[ref.Key]; dup {
			return fmt.Errorf("restore checkpoint %d: shared file %s listed twice", id, ref.Key)
		}
		seen[ref.Key] = struct{}{}
		if err := ValidBlobName(ref.Blob); err != nil {
			return fmt.Errorf("restore checkpoint %d: shared file %s: %w", id, ref.Key, err)
		}
		if e := r.entries[ref.Key]; e != nil && (e.blob != ref.Blob || e.size != ref.Size) {
			return fmt.Errorf("restore checkpoint %d: %w %s: %s (%d bytes) vs %s (%d bytes)", id, ErrConflictingSharedFile, ref.Key, ref.Blob, ref.Size, e.blob, e.size)
		}
	}
	for _, ref := range refs {
		e := r.entries[ref.Key]
		if e == nil {
			e = r.newEntry(ref, id)
		}
		e.confirmed = true
		r.addRef(ref.Key, e, id)
		if !owned {
			r.external[ref.Blob] = struct{}{}
		}
	}
	return nil
}

// Confirm marks every key checkpoint id references as part of a completed
// checkpoint.
func (r *Registry) Confirm(id CheckpointID) {
	for k := range r.byCheckpoint[id] {
		r.entries[k].confirmed = true
	}
}

// Release drops checkpoint id's references (it was subsumed or aborted) and
// returns the blobs no key holds any more, sorted. Releasing an unknown id
// does nothing.
func (r *Registry) Release(id CheckpointID) []string {
	var candidates []string
	for k := range r.byCheckpoint[id] {
		e := r.entries[k]
		delete(e.refs, id)
		if len(e.refs) > 0 {
			continue
		}
		delete(r.entries, k)
		r.blobUsers[e.blob]--
		candidates = append(candidates, e.blob)
	}
	delete(r.byCheckpoint, id)
	return r.unreferenced(candidates)
}

// Entry describes the registered key.
func (r *Registry) Entry(k FileKey) (SharedEntry, bool) {
	e, ok := r.entries[k]
	if !ok {
		return SharedEntry{}, false
	}
	return SharedEntry{
		Blob:       e.blob,
		Size:       e.size,
		CreatedBy:  e.createdBy,
		Confirmed:  e.confirmed,
		References: slices.Sorted(maps.Keys(e.refs)),
	}, true
}

// Len is the number of registered keys.
func (r *Registry) Len() int { return len(r.entries) }

// HasBlob reports whether some registered key holds blob.
func (r *Registry) HasBlob(blob string) bool { return r.blobUsers[blob] > 0 }

func (r *Registry) isExternal(blob string) bool {
	_, ok := r.external[blob]
	return ok
}

// Blobs lists every blob some key holds, sorted.
func (r *Registry) Blobs() []string { return slices.Sorted(maps.Keys(r.blobUsers)) }

func (r *Registry) newEntry(ref SharedRef, id CheckpointID) *sharedEntry {
	e := &sharedEntry{refs: make(map[CheckpointID]struct{})}
	r.setBlob(e, ref.Blob, ref.Size, id)
	r.entries[ref.Key] = e
	return e
}

func (r *Registry) setBlob(e *sharedEntry, blob string, size int64, id CheckpointID) {
	if e.blob != "" {
		r.blobUsers[e.blob]--
	}
	e.blob, e.size, e.createdBy = blob, size, id
	r.blobUsers[blob]++
}

func (r *Registry) addRef(k FileKey, e *sharedEntry, id CheckpointID) {
	e.refs[id] = struct{}{}
	keys := r.byCheckpoint[id]
	if keys == nil {
		keys = make(map[FileKey]struct{})
		r.byCheckpoint[id] = keys
	}
	keys[k] = struct{}{}
}

// unreferenced filters candidate blobs down to those no key holds and this
// job owns, sorted and without duplicates.
func (r *Registry) unreferenced(candidates []string) []string {
	var out []string
	for _, b := range candidates {
		if r.blobUsers[b] > 0 {
			continue
		}
		delete(r.blobUsers, b)
		if _, ext := r.external[b]; ext {
			continue
		}
		out = append(out, b)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkInvariants verifies the registry's internal consistency.
func (r *Registry) checkInvariants() error {
	users := make(map[string]int)
	refs := 0
	for k, e := range r.entries {
		if len(e.refs) == 0 {
			return fmt.Errorf("key %s has no references", k)
		}
		if e.blob == "" {
			return fmt.Errorf("key %s has no blob", k)
		}
		users[e.blob]++
		for id := range e.refs {
			if _, ok := r.byCheckpoint[id][k]; !ok {
				return fmt.Errorf("key %s referenced by %d, which does not list it", k, id)
			}
			refs++
		}
	}
	indexed := 0
	for id, keys := range r.byCheckpoint {
		for k := range keys {
			e := r.entries[k]
			if e == nil {
				return fmt.Errorf("checkpoint %d lists unregistered key %s", id, k)
			}
			if _, ok := e.refs[id]; !ok {
				return fmt.Errorf("checkpoint %d lists key %s, which does not reference it", id, k)
			}
			indexed++
		}
	}
	if refs != indexed {
		return fmt.Errorf("%d references vs %d indexed", refs, indexed)
	}
	if !maps.Equal(users, r.blobUsers) {
		return fmt.Errorf("blob users %v, want %v", r.blobUsers, users)
	}
	return nil
}
