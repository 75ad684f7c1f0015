package barrier

import (
	"errors"
	"fmt"
	"slices"
)

// Registry is the coordinator's shared-state registry: for every shared file
// key, the uploaded copies of that file, which checkpoints reference each
// copy, and whether a completed checkpoint includes it (confirmed). It is a
// pure state machine; it deletes nothing itself but reports exactly which
// blobs became unreferenced.
//
// Registration follows Flink's SharedStateRegistry case by case:
//
//   - an unknown key is registered; a placeholder for an unknown key is an
//     error, so a placeholder can never resurrect a deleted file;
//   - a placeholder, or an already registered blob, adds a reference; a
//     placeholder resolves to the key's current copy;
//   - a different upload for a confirmed key is a re-upload made while
//     confirmation was delayed: the registry keeps the confirmed copy and
//     discards the new upload;
//   - a different upload for an unconfirmed key becomes the key's current
//     copy: after a failover a store may recreate a file of the same name
//     with different content, and new checkpoints must not resolve to the
//     stale one.
//
// Unlike Flink, the registry counts references per checkpoint, so it knows
// when the superseded copy in the last case is still named by a pending
// checkpoint (two concurrent checkpoints that both uploaded a file not yet
// confirmed). It keeps that copy until those checkpoints are released rather
// than deleting a blob they name; each checkpoint stays self-consistent and
// either can complete. Flink has no such count and deletes the old copy at
// once.
//
// It is also stricter where Flink would silently pick wrong content: a
// placeholder or re-upload whose size differs from the confirmed copy, two
// different uploads for one key within one checkpoint, and completing a
// checkpoint that would confirm a second copy of another size are
// ErrConflictingSharedFile. Confirmation is exact: a copy is confirmed once
// any completed checkpoint references it (Flink approximates this with the
// last checkpoint that used the key). Blobs are counted across keys, so two
// keys may share one blob (files adopted by reference after a rescale); a
// blob is reported for deletion only when nothing holds it.
type Registry struct {
	entries      map[FileKey]*sharedEntry
	byCheckpoint map[CheckpointID]map[FileKey]struct{}
	blobUsers    map[string]int      // live copies per blob
	external     map[string]struct{} // blobs restored without ownership: never deleted
}

// sharedEntry holds the copies of one key in registration order. Each
// checkpoint references at most one copy of a key.
type sharedEntry struct {
	copies []*sharedCopy
}

type sharedCopy struct {
	blob      string
	size      int64
	createdBy CheckpointID // the checkpoint that uploaded blob
	refs      map[CheckpointID]struct{}
	confirmed bool
}

// current is the copy placeholders resolve to. Among confirmed copies it is
// the one the newest checkpoint references, which stays retained longest;
// without a confirmed copy it is the latest upload.
func (e *sharedEntry) current() *sharedCopy {
	var best *sharedCopy
	var bestRef CheckpointID
	for _, c := range e.copies {
		if !c.confirmed {
			continue
		}
		if newest := maxRef(c); best == nil || newest > bestRef {
			best, bestRef = c, newest
		}
	}
	if best != nil {
		return best
	}
	return e.copies[len(e.copies)-1]
}

func maxRef(c *sharedCopy) CheckpointID {
	var m CheckpointID
	for id := range c.refs {
		m = max(m, id)
	}
	return m
}

func (e *sharedEntry) copyWithBlob(blob string) *sharedCopy {
	for _, c := range e.copies {
		if c.blob == blob {
			return c
		}
	}
	return nil
}

func (e *sharedEntry) copyReferencedBy(id CheckpointID) *sharedCopy {
	for _, c := range e.copies {
		if _, ok := c.refs[id]; ok {
			return c
		}
	}
	return nil
}

// SharedCopy is a read-only view of one copy of a shared file.
type SharedCopy struct {
	Blob       string
	Size       int64
	CreatedBy  CheckpointID
	Confirmed  bool
	References []CheckpointID // sorted
}

// SharedEntry is a read-only view of a registered key: its current copy and
// the superseded copies that pending or retained checkpoints still hold.
type SharedEntry struct {
	SharedCopy
	Superseded []SharedCopy
}

var (
	// ErrUnknownSharedFile: a placeholder names a key nothing registered.
	ErrUnknownSharedFile = errors.New("placeholder for an unknown shared file")
	// ErrConflictingSharedFile: two different files claim one key.
	ErrConflictingSharedFile = errors.New("conflicting content for a shared file")
)

// Registration is the outcome of registering one acknowledgement.
type Registration struct {
	// Resolved holds the registered refs in input order: Blob is the copy
	// the checkpoint now references, and Placeholder is false only where
	// that copy is this checkpoint's own upload.
	Resolved []SharedRef
	// Discard lists uploads nothing references (sorted): re-uploads of
	// confirmed files.
	Discard []string
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
	out := Registration{Resolved: make([]SharedRef, len(refs))}
	var discard []string
	for i, ref := range refs {
		e := r.entries[ref.Key]
		var c *sharedCopy
		switch {
		case e == nil:
			e = &sharedEntry{}
			r.entries[ref.Key] = e
			c = r.addCopy(e, ref, id)
		case ref.Placeholder:
			c = e.current()
		case e.copyWithBlob(ref.Blob) != nil:
			c = e.copyWithBlob(ref.Blob) // a repeated acknowledgement
		case e.current().confirmed:
			c = e.current()
			discard = append(discard, ref.Blob)
		default:
			c = r.addCopy(e, ref, id)
		}
		c.refs[id] = struct{}{}
		r.index(id, ref.Key)
		out.Resolved[i] = SharedRef{Key: ref.Key, Size: c.size, Blob: c.blob, Placeholder: c.createdBy != id}
	}
	out.Discard = r.unreferenced(discard)
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
		if err := r.checkRef(id, ref); err != nil {
			return fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	return nil
}

func (r *Registry) checkRef(id CheckpointID, ref SharedRef) error {
	e := r.entries[ref.Key]
	if ref.Placeholder {
		if e == nil {
			return fmt.Errorf("%w %s", ErrUnknownSharedFile, ref.Key)
		}
		if c := e.current(); c.size != ref.Size {
			return fmt.Errorf("%w %s: placeholder of %d bytes for a file of %d bytes", ErrConflictingSharedFile, ref.Key, ref.Size, c.size)
		}
		if c := e.copyReferencedBy(id); c != nil && c != e.current() {
			return fmt.Errorf("%w %s: already references copy %s", ErrConflictingSharedFile, ref.Key, c.blob)
		}
		return nil
	}
	if err := ValidBlobName(ref.Blob); err != nil {
		return fmt.Errorf("shared file %s: %w", ref.Key, err)
	}
	if e == nil {
		return nil
	}
	if c := e.copyWithBlob(ref.Blob); c != nil {
		if c.size != ref.Size {
			return fmt.Errorf("%w %s: blob %s registered with %d bytes, now %d", ErrConflictingSharedFile, ref.Key, ref.Blob, c.size, ref.Size)
		}
		if mine := e.copyReferencedBy(id); mine != nil && mine != c {
			return fmt.Errorf("%w %s: already references copy %s", ErrConflictingSharedFile, ref.Key, mine.blob)
		}
		return nil
	}
	if cur := e.current(); cur.confirmed {
		if cur.size != ref.Size {
			return fmt.Errorf("%w %s: re-upload of %d bytes for a confirmed file of %d bytes", ErrConflictingSharedFile, ref.Key, ref.Size, cur.size)
		}
		if mine := e.copyReferencedBy(id); mine != nil && mine != cur {
			return fmt.Errorf("%w %s: already references copy %s", ErrConflictingSharedFile, ref.Key, mine.blob)
		}
		return nil
	}
	if mine := e.copyReferencedBy(id); mine != nil {
		return fmt.Errorf("%w %s: uploaded twice in one checkpoint, as %s and %s", ErrConflictingSharedFile, ref.Key, mine.blob, ref.Blob)
	}
	return nil
}

func (r *Registry) addCopy(e *sharedEntry, ref SharedRef, id CheckpointID) *sharedCopy {
	c := &sharedCopy{blob: ref.Blob, size: ref.Size, createdBy: id, refs: make(map[CheckpointID]struct{})}
	e.copies = append(e.copies, c)
	r.blobUsers[ref.Blob]++
	return c
}

func (r *Registry) index(id CheckpointID, k FileKey) {
	keys := r.byCheckpoint[id]
	if keys == nil {
		keys = make(map[FileKey]struct{})
		r.byCheckpoint[id] = keys
	}
	keys[k] = struct{}{}
}

// unreferenced filters candidate blobs down to those nothing holds and this
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
