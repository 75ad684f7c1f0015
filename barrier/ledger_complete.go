package barrier

import (
	"fmt"
	"slices"
)

// Complete records that checkpoint id completed: every subtask acknowledged
// and its metadata was written to metadataBlob. A completed checkpoint
// confirms its files, may subsume the oldest retained checkpoints, and aborts
// pending checkpoints older than itself, which could never become the
// latest. A savepoint neither subsumes nor aborts anything.
//
// Completing an id that is not pending (aborted meanwhile, or completed
// already) fails with ErrNotPending, and the plan deletes metadataBlob unless
// it is live: a checkpoint aborted while its metadata was being written must
// not leave the metadata behind. A checkpoint whose files conflict with a
// confirmed copy (see Registry.CheckConfirm) is aborted instead.
func (l *Ledger) Complete(id CheckpointID, metadataBlob string) (Plan, error) {
	if err := ValidBlobName(metadataBlob); err != nil {
		return Plan{}, fmt.Errorf("complete %d: metadata: %w", id, err)
	}
	p := l.pending[id]
	if p == nil {
		return l.dropUploads([]string{metadataBlob}), fmt.Errorf("complete %d: %w", id, ErrNotPending)
	}
	if err := l.registry.CheckConfirm(id); err != nil {
		var plan Plan
		l.abort(id, &plan)
		plan.deleteBlobs(metadataBlob)
		return l.finish(plan), fmt.Errorf("complete %d: %w", id, err)
	}
	delete(l.pending, id)
	meta := ownedBlob{name: metadataBlob, owned: true}
	if p.kind == KindSavepoint {
		l.savepoints[id] = &savepointFiles{metadata: meta, blobs: sortedKeys(p.uploads)}
		return Plan{}, nil
	}
	l.registry.Confirm(id)
	var plan Plan
	l.retain(id, meta, &plan)
	for c, pc := range l.pending {
		if c < id && pc.kind == KindCheckpoint {
			l.abort(c, &plan)
		}
	}
	return l.finish(plan), nil
}

// retain adds a completed checkpoint to the retained set and releases the
// checkpoints it subsumes.
func (l *Ledger) retain(id CheckpointID, meta ownedBlob, plan *Plan) {
	subsumed, err := l.retention.Add(id)
	if err != nil {
		// Begin and Restore only admit growing ids, and completing a
		// checkpoint aborts every older pending one.
		panic("barrier: " + err.Error())
	}
	l.retained[id] = meta
	for _, s := range subsumed {
		plan.Subsumed = append(plan.Subsumed, s)
		plan.deleteBlobs(l.registry.Release(s)...)
		if m := l.retained[s]; m.owned {
			plan.deleteBlobs(m.name)
		}
		delete(l.retained, s)
	}
}

// DisposeSavepoint deletes completed savepoint id: its files and metadata.
func (l *Ledger) DisposeSavepoint(id CheckpointID) (Plan, error) {
	sp := l.savepoints[id]
	if sp == nil {
		return Plan{}, fmt.Errorf("dispose savepoint %d: no such savepoint", id)
	}
	delete(l.savepoints, id)
	for _, b := range sp.blobs {
		delete(l.exclusive, b)
	}
	if !sp.metadata.owned {
		return Plan{}, nil
	}
	var plan Plan
	for _, b := range append(sp.blobs, sp.metadata.name) {
		if !l.live(b) {
			plan.deleteBlobs(b)
		}
	}
	return l.finish(plan), nil
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
