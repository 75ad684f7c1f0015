package barrier

import "slices"

// Plan is what a Ledger transition asks the coordinator to do. A plan
// accompanies errors too: uploads that a rejected acknowledgement brought
// must still be deleted.
type Plan struct {
	// Aborted lists pending checkpoints the transition aborted: stores must
	// hear Aborted(n) and never use them as a reuse base.
	Aborted []CheckpointID
	// Subsumed lists completed checkpoints that are no longer retained.
	Subsumed []CheckpointID
	// Delete lists blobs that nothing retained or pending references, sorted.
	// Deleting them is safe whenever it happens, and retrying is harmless.
	Delete []string
}

// IsEmpty reports whether the plan asks for nothing.
func (p Plan) IsEmpty() bool {
	return len(p.Aborted) == 0 && len(p.Subsumed) == 0 && len(p.Delete) == 0
}

func (p *Plan) deleteBlobs(blobs ...string) { p.Delete = append(p.Delete, blobs...) }

// finish sorts and de-duplicates the plan's lists.
func (p *Plan) finish() {
	slices.Sort(p.Aborted)
	p.Aborted = slices.Compact(p.Aborted)
	slices.Sort(p.Subsumed)
	p.Subsumed = slices.Compact(p.Subsumed)
	slices.Sort(p.Delete)
	p.Delete = slices.Compact(p.Delete)
}
