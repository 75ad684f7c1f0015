package table

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Hint files in the snapshot directory. They hold a snapshot id as decimal
// text without a newline and are only hints: LATEST is trusted when the
// snapshot after it does not exist, EARLIEST when its snapshot exists;
// otherwise the directory listing decides.
const (
	latestHint   = "LATEST"
	earliestHint = "EARLIEST"
)

// snapshotStore reads and publishes the snapshot files of one table.
type snapshotStore struct {
	fio   FileIO
	paths *pathFactory
}

// latestID returns the newest snapshot id, or ok=false when there is none.
func (s snapshotStore) latestID() (id int64, ok bool, err error) {
	if hint, ok := s.readHint(latestHint); ok && hint > 0 {
		exists, err := s.exists(hint + 1)
		if err != nil {
			return 0, false, err
		}
		if !exists {
			return hint, true, nil
		}
	}
	return s.listExtreme(func(a, b int64) bool { return a > b })
}

// earliestID returns the oldest snapshot id, or ok=false when there is none.
func (s snapshotStore) earliestID() (id int64, ok bool, err error) {
	if hint, ok := s.readHint(earliestHint); ok {
		exists, err := s.exists(hint)
		if err != nil {
			return 0, false, err
		}
		if exists {
			return hint, true, nil
		}
	}
	return s.listExtreme(func(a, b int64) bool { return a < b })
}

func (s snapshotStore) exists(id int64) (bool, error) {
	_, err := s.fio.Stat(s.paths.snapshotPath(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// readHint returns a hint's id; a missing or unparsable hint is no hint.
func (s snapshotStore) readHint(name string) (int64, bool) {
	data, err := s.fio.ReadFile(path.Join(s.paths.snapshotDir(), name))
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	return id, err == nil
}

// listExtreme scans snapshot-<n> names for the id that better() prefers.
func (s snapshotStore) listExtreme(better func(a, b int64) bool) (int64, bool, error) {
	names, err := s.fio.List(s.paths.snapshotDir())
	if err != nil {
		return 0, false, fmt.Errorf("list %s: %w", s.paths.snapshotDir(), err)
	}
	var best int64
	found := false
	for _, name := range names {
		id, ok := snapshotIDOf(name)
		if ok && (!found || better(id, best)) {
			best, found = id, true
		}
	}
	return best, found, nil
}

// snapshotIDOf parses "snapshot-<n>"; other names (hints, dot-prefixed
// temporary files) are not snapshots.
func snapshotIDOf(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, snapshotFilePrefix)
	if !ok || digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	return id, err == nil && id > 0
}

// read reads and decodes snapshot id.
func (s snapshotStore) read(id int64) (*Snapshot, error) {
	p := s.paths.snapshotPath(id)
	data, err := s.fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %d: %w", id, err)
	}
	snap, err := DecodeSnapshot(p, data)
	if err != nil {
		return nil, err
	}
	if snap.ID != id {
		return nil, fmt.Errorf("%s: holds snapshot id %d", p, snap.ID)
	}
	return snap, nil
}

// errSnapshotExists reports that another committer published the id first.
var errSnapshotExists = errors.New("snapshot already exists")

// publish makes snap visible with an exclusive create: a synced,
// dot-prefixed temporary file is linked to snapshot-N, which fails if
// another committer got there first (errSnapshotExists). The directory is
// synced so the new name survives a crash. A failure of the link itself or
// of the sync after it leaves the outcome unknown (ErrCommitStateUnknown).
func (s snapshotStore) publish(snap *Snapshot) error {
	target := s.paths.snapshotPath(snap.ID)
	tmp := s.tempPath(path.Base(target))
	if err := writeFileSynced(s.fio, tmp, EncodeSnapshot(snap)); err != nil {
		return err
	}
	if err := s.fio.PublishExclusive(tmp, target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("publish %s: %w", target, errSnapshotExists)
		}
		s.fio.Remove(tmp)
		return fmt.Errorf("publish %s: %w: %w", target, ErrCommitStateUnknown, err)
	}
	if err := s.fio.SyncDir(s.paths.snapshotDir()); err != nil {
		return fmt.Errorf("sync %s after publishing %s: %w: %w", s.paths.snapshotDir(), target, ErrCommitStateUnknown, err)
	}
	return nil
}

// writeHint replaces a hint file (temporary file, then rename). Hints need
// no fsync: a stale or lost hint only costs a directory listing.
func (s snapshotStore) writeHint(name string, id int64) error {
	target := path.Join(s.paths.snapshotDir(), name)
	tmp := s.tempPath(name)
	f, err := s.fio.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(strconv.FormatInt(id, 10))); err != nil {
		f.Close()
		s.fio.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		s.fio.Remove(tmp)
		return err
	}
	return s.fio.Rename(tmp, target)
}

// tempPath is a dot-prefixed name beside the snapshot files, invisible to
// the snapshot- and hint-name matching of every Paimon reader.
func (s snapshotStore) tempPath(base string) string {
	return path.Join(s.paths.snapshotDir(), "."+base+"."+s.paths.newName("", ".tmp"))
}

// writeFileSynced creates path with data and syncs it; on failure the
// partial file is removed.
func writeFileSynced(fio FileIO, p string, data []byte) error {
	f, err := fio.Create(p)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fio.Remove(p)
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
