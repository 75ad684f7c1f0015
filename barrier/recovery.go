package barrier

import (
	"cmp"
	"slices"
	"strings"
)

// restoreLedger seeds a fresh ledger with the checkpoints and savepoints a
// blob store holds, oldest first, owned (they are this job's). Checkpoints
// beyond the ledger's retention are subsumed by the returned plan. Metadata
// the ledger refuses joins bad: such a checkpoint is neither used nor
// deleted.
func restoreLedger(l *Ledger, metas map[string]*Metadata, bad []string) (Plan, []string) {
	names := make([]string, 0, len(metas))
	for n := range metas {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(metas[a].ID, metas[b].ID) })
	var plan Plan
	unreadable := slices.Clone(bad)
	for _, n := range names {
		p, err := l.Restore(metas[n], n, true)
		if err != nil {
			unreadable = append(unreadable, n)
			continue
		}
		plan.Subsumed = append(plan.Subsumed, p.Subsumed...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	plan.finish()
	slices.Sort(unreadable)
	return plan, unreadable
}

// sweepOrphans returns the blobs of listing in the checkpoint layout's
// namespaces that nothing the ledger tracks references: uploads and metadata
// of checkpoints that never completed, and blobs whose deletion failed.
// The directories of unreadable metadata are left alone: their checkpoints
// may have completed, and deleting their files would lose them for good.
func sweepOrphans(listing []BlobInfo, l *Ledger, unreadable []string) []string {
	live := make(map[string]bool)
	for _, b := range l.LiveBlobs() {
		live[b] = true
	}
	var protected []string
	for _, name := range unreadable {
		kind, id, ok := ParseMetadataBlobName(name)
		if !ok {
			continue
		}
		protected = append(protected, dirOf(kind, id)+"/")
		if kind == KindCheckpoint {
			protected = append(protected, "shared/"+dirOf(kind, id)+"/")
		}
	}
	var out []string
	for _, b := range listing {
		if live[b.Name] || !inLayout(b.Name) {
			continue
		}
		if slices.ContainsFunc(protected, func(p string) bool { return strings.HasPrefix(b.Name, p) }) {
			continue
		}
		out = append(out, b.Name)
	}
	slices.Sort(out)
	return out
}

// inLayout reports whether name is in a namespace the checkpoint layout
// writes to; anything else in the store is not the coordinator's to delete.
func inLayout(name string) bool {
	return strings.HasPrefix(name, "shared/chk-") || strings.HasPrefix(name, "chk-") || strings.HasPrefix(name, "savepoint-")
}
