package barrier

import (
	"maps"
	"slices"
)

// Entry describes the registered key.
func (r *Registry) Entry(k FileKey) (SharedEntry, bool) {
	e, ok := r.entries[k]
	if !ok {
		return SharedEntry{}, false
	}
	view := func(c *sharedCopy) SharedCopy {
		return SharedCopy{Blob: c.blob, Size: c.size, CreatedBy: c.createdBy, Confirmed: c.confirmed, References: slices.Sorted(maps.Keys(c.refs))}
	}
	cur := e.current()
	out := SharedEntry{SharedCopy: view(cur)}
	for _, c := range e.copies {
		if c != cur {
			out.Superseded = append(out.Superseded, view(c))
		}
	}
	return out, true
}

// Len is the number of registered keys.
func (r *Registry) Len() int { return len(r.entries) }

// HasBlob reports whether some registered copy is blob.
func (r *Registry) HasBlob(blob string) bool { return r.blobUsers[blob] > 0 }

func (r *Registry) isExternal(blob string) bool {
	_, ok := r.external[blob]
	return ok
}

// Blobs lists every blob some copy holds, sorted.
func (r *Registry) Blobs() []string { return slices.Sorted(maps.Keys(r.blobUsers)) }

// referencedBlobs lists the blobs checkpoint id references, sorted.
func (r *Registry) referencedBlobs(id CheckpointID) []string {
	var out []string
	for k := range r.byCheckpoint[id] {
		out = append(out, r.entries[k].copyReferencedBy(id).blob)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
