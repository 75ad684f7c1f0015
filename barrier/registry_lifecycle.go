package barrier

import (
	"fmt"
	"slices"
)

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
		// Concurrent checkpoints may each have completed with their own
		// copy of a file; copies must agree on the size.
		if e := r.entries[ref.Key]; e != nil {
			if c := e.current(); c.size != ref.Size {
				return fmt.Errorf("restore checkpoint %d: %w %s: %s (%d bytes) vs %s (%d bytes)", id, ErrConflictingSharedFile, ref.Key, ref.Blob, ref.Size, c.blob, c.size)
			}
		}
	}
	for _, ref := range refs {
		e := r.entries[ref.Key]
		if e == nil {
			e = &sharedEntry{}
			r.entries[ref.Key] = e
		}
		c := e.copyWithBlob(ref.Blob)
		if c == nil {
			c = r.addCopy(e, ref, id)
		}
		c.confirmed = true
		c.refs[id] = struct{}{}
		r.index(id, ref.Key)
		if !owned {
			r.external[ref.Blob] = struct{}{}
		}
	}
	return nil
}

// CheckConfirm reports whether Confirm(id) would give a key a second
// confirmed copy of a different size: content two completed checkpoints
// disagree on, which placeholders could then resolve to wrongly.
func (r *Registry) CheckConfirm(id CheckpointID) error {
	for k := range r.byCheckpoint[id] {
		e := r.entries[k]
		mine := e.copyReferencedBy(id)
		for _, c := range e.copies {
			if c != mine && c.confirmed && c.size != mine.size {
				return fmt.Errorf("checkpoint %d: %w %s: would confirm %s (%d bytes) beside confirmed %s (%d bytes)", id, ErrConflictingSharedFile, k, mine.blob, mine.size, c.blob, c.size)
			}
		}
	}
	return nil
}

// Confirm marks every copy checkpoint id references as part of a completed
// checkpoint.
func (r *Registry) Confirm(id CheckpointID) {
	for k := range r.byCheckpoint[id] {
		r.entries[k].copyReferencedBy(id).confirmed = true
	}
}

// Release drops checkpoint id's references (it was subsumed or aborted) and
// returns the blobs nothing holds any more, sorted. Releasing an unknown id
// does nothing.
func (r *Registry) Release(id CheckpointID) []string {
	var candidates []string
	for k := range r.byCheckpoint[id] {
		e := r.entries[k]
		c := e.copyReferencedBy(id)
		delete(c.refs, id)
		if len(c.refs) > 0 {
			continue
		}
		e.copies = slices.DeleteFunc(e.copies, func(x *sharedCopy) bool { return x == c })
		if len(e.copies) == 0 {
			delete(r.entries, k)
		}
		r.blobUsers[c.blob]--
		candidates = append(candidates, c.blob)
	}
	delete(r.byCheckpoint, id)
	return r.unreferenced(candidates)
}
