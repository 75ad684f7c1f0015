package table

import (
	"errors"
	"fmt"
	"io/fs"
)

// commitIndex remembers, per commit user, the snapshots of its newest
// commit identifier, so a retried commit is recognised without reading
// every snapshot again. It covers snapshots up to scanned.
type commitIndex struct {
	scanned int64
	users   map[string]*userCommits
}

type userCommits struct {
	identifier int64
	snapshots  map[CommitKind]int64 // kind -> snapshot id, at identifier
}

func (ix *commitIndex) record(s *Snapshot) {
	if ix.users == nil {
		ix.users = make(map[string]*userCommits)
	}
	u := ix.users[s.CommitUser]
	if u == nil || s.CommitIdentifier > u.identifier {
		u = &userCommits{identifier: s.CommitIdentifier, snapshots: make(map[CommitKind]int64)}
		ix.users[s.CommitUser] = u
	}
	if s.CommitIdentifier == u.identifier {
		u.snapshots[s.CommitKind] = s.ID
	}
	ix.scanned = s.ID
}

// findCommitted reports the snapshot that already holds commit (c, kind)
// with latest the newest snapshot. An identifier below the user's newest is
// an error: it is either committed long ago or never will be, and Paimon's
// readers rely on identifiers growing per user. Callers hold commitMu.
func (t *Table) findCommitted(c CommitInfo, kind CommitKind, latest *Snapshot) (int64, bool, error) {
	if latest == nil {
		return 0, false, nil
	}
	if err := t.indexCommits(latest); err != nil {
		return 0, false, err
	}
	u := t.commits.users[c.User]
	switch {
	case u == nil || c.Identifier > u.identifier:
		return 0, false, nil
	case c.Identifier < u.identifier:
		return 0, false, fmt.Errorf("commit %s of %s/%d: the user already committed identifier %d", kind, c.User, c.Identifier, u.identifier)
	}
	id, ok := u.snapshots[kind]
	return id, ok, nil
}

// indexCommits reads the snapshots after the indexed ones, up to latest.
func (t *Table) indexCommits(latest *Snapshot) error {
	ix := &t.commits
	from := ix.scanned + 1
	if ix.scanned == 0 {
		earliest, ok, err := t.snapshots.earliestID()
		if err != nil {
			return err
		}
		if ok {
			from = earliest
		}
	}
	for id := from; id < latest.ID; id++ {
		s, err := t.snapshots.read(id)
		if errors.Is(err, fs.ErrNotExist) {
			// Expired while we read; it cannot hold the newest commit of
			// any user that matters to a commit now.
			continue
		}
		if err != nil {
			return err
		}
		ix.record(s)
	}
	if latest.ID > ix.scanned {
		ix.record(latest)
	}
	return nil
}
