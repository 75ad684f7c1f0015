package barrier

import "fmt"

// Restore seeds the ledger with a checkpoint or savepoint that completed
// before it existed: the checkpoint a job restarts from, or each retained
// checkpoint a restarted coordinator finds, oldest first and before any
// Begin. A restored checkpoint's files become confirmed shared files that
// new checkpoints may reference. Unless owned (no-claim mode, or another
// job's checkpoint), none of its blobs is ever deleted by this ledger. A
// restored savepoint registers nothing, since savepoints share nothing; an
// owned one can be disposed later.
func (l *Ledger) Restore(m *Metadata, metadataBlob string, owned bool) (Plan, error) {
	if err := m.Validate(); err != nil {
		return Plan{}, fmt.Errorf("restore %s: %w", metadataBlob, err)
	}
	if err := ValidBlobName(metadataBlob); err != nil {
		return Plan{}, fmt.Errorf("restore %d: metadata: %w", m.ID, err)
	}
	if m.ID <= l.lastID {
		return Plan{}, fmt.Errorf("restore %s %d: ids must grow, last was %d", m.Kind, m.ID, l.lastID)
	}
	meta := ownedBlob{name: metadataBlob, owned: owned}
	if m.Kind == KindSavepoint {
		l.lastID = m.ID
		if owned {
			sp := &savepointFiles{metadata: meta}
			for i := range m.Operators {
				for j := range m.Operators[i].Subtasks {
					sp.blobs = append(sp.blobs, uploads(&m.Operators[i].Subtasks[j])...)
				}
			}
			for _, b := range sp.blobs {
				l.exclusive[b] = m.ID
			}
			l.savepoints[m.ID] = sp
		}
		return Plan{}, nil
	}
	var refs []SharedRef
	for i := range m.Operators {
		for j := range m.Operators[i].Subtasks {
			refs = append(refs, subtaskRefs(&m.Operators[i].Subtasks[j])...)
		}
	}
	if err := l.registry.Restore(m.ID, refs, owned); err != nil {
		return Plan{}, err
	}
	l.lastID = m.ID
	var plan Plan
	l.retain(m.ID, meta, &plan)
	return l.finish(plan), nil
}
