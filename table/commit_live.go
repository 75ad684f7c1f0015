package table

import "fmt"

// liveState is the live data files and index entries of one snapshot. A
// Table keeps the state of the newest snapshot it has seen and advances it
// by the delta manifests of later snapshots, so a commit costs the deltas it
// has not seen rather than a walk of every manifest.
type liveState struct {
	snapshotID int64
	files      *entryFold // ADD entries only
	indexName  string
	index      []IndexManifestEntry
}

// maxDeltaCatchUp bounds how many snapshots the cached state is advanced by
// deltas; further behind, one full walk is cheaper.
const maxDeltaCatchUp = 64

// walkLive folds every data manifest of s and reads its index manifest.
func (t *Table) walkLive(s *Snapshot) (*liveState, error) {
	metas, err := t.meta.dataManifests(s)
	if err != nil {
		return nil, err
	}
	l := &liveState{snapshotID: s.ID, files: newEntryFold()}
	for _, meta := range metas {
		entries, err := t.meta.readManifest(meta.FileName)
		if err != nil {
			return nil, err
		}
		if err := l.files.applyAll(entries); err != nil {
			return nil, fmt.Errorf("snapshot %d, manifest %s: %w", s.ID, meta.FileName, err)
		}
	}
	if dangling := l.files.entries(FileDelete); len(dangling) > 0 {
		return nil, fmt.Errorf("snapshot %d deletes file %s that no manifest adds", s.ID, dangling[0].File.FileName)
	}
	if err := t.setIndex(l, s.IndexManifest); err != nil {
		return nil, err
	}
	return l, nil
}

func (t *Table) setIndex(l *liveState, name string) error {
	if name == l.indexName && (name == "" || l.index != nil) {
		return nil
	}
	l.indexName, l.index = name, nil
	if name == "" {
		return nil
	}
	index, err := t.meta.readIndexManifest(name)
	if err != nil {
		return err
	}
	l.index = index
	return nil
}

// liveAt returns the live state of snapshot s (nil: the empty table). The
// cached state is advanced in place when s is a little ahead of it. Callers
// hold commitMu; readers of t.live take liveMu.
func (t *Table) liveAt(s *Snapshot) (*liveState, error) {
	if s == nil {
		return &liveState{files: newEntryFold()}, nil
	}
	t.liveMu.Lock()
	l := t.live
	t.liveMu.Unlock()
	if l != nil && l.snapshotID == s.ID {
		return l, nil
	}
	if l != nil && l.snapshotID < s.ID && s.ID-l.snapshotID <= maxDeltaCatchUp {
		if err := t.advance(l, s); err == nil {
			return l, nil
		}
		// A delta that expired or does not fold: walk instead.
	}
	l, err := t.walkLive(s)
	if err != nil {
		return nil, err
	}
	t.liveMu.Lock()
	t.live = l
	t.liveMu.Unlock()
	return l, nil
}

// advance moves l forward to s by folding the delta manifests of the
// snapshots in between. On error l is dropped from the cache.
func (t *Table) advance(l *liveState, s *Snapshot) error {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	t.live = nil
	for id := l.snapshotID + 1; id <= s.ID; id++ {
		snap := s
		if id != s.ID {
			var err error
			if snap, err = t.snapshots.read(id); err != nil {
				return err
			}
		}
		metas, err := t.meta.readManifestList(snap.DeltaManifestList)
		if err != nil {
			return err
		}
		entries, err := t.meta.readManifests(metas)
		if err != nil {
			return err
		}
		if err := l.files.applyAll(entries); err != nil {
			return err
		}
		if err := t.setIndex(l, snap.IndexManifest); err != nil {
			return err
		}
		l.snapshotID = id
	}
	if len(l.files.entries(FileDelete)) > 0 {
		return fmt.Errorf("snapshot %d deletes a file no manifest adds", s.ID)
	}
	t.live = l
	return nil
}
