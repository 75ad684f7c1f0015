package table

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// PinSet names what expiration must keep besides the newest snapshots:
// snapshots a reader or an in-flight checkpoint still uses (expiration stops
// before the oldest of them, so snapshot ids stay contiguous), and files by
// table-relative path (for example "bucket-0/data-<uuid>-0.parquet" or
// "manifest/manifest-<uuid>-3") that must survive even when no retained
// snapshot references them.
type PinSet struct {
	Snapshots []int64
	Files     []string
}

// ExpireResult reports what an expiration removed.
type ExpireResult struct {
	Expired  []int64  // snapshot ids removed, ascending
	Deleted  []string // table-relative paths of the files removed
	Earliest int64    // the oldest snapshot left (0 when there is none)
}

// Expire removes the snapshots older than the newest keep (and older than
// every pinned snapshot) and the files that only they reference. A file is
// removed only when no retained snapshot references it and no pin names it:
// data files that the expired range deleted and did not add back, and the
// manifests, manifest lists, index manifests and index files of expired
// snapshots that the oldest retained snapshot does not use (every later
// snapshot derives from it, so it holds every older file they use).
//
// The order survives a crash at any point, and a rerun finishes the job:
// what a file lists is removed before the file (data files, then manifests
// and index files, then manifest lists and index manifests, then snapshot
// files oldest first, then the EARLIEST hint). A rerun that finds a listing
// file gone knows everything it listed is gone too.
func (t *Table) Expire(keep int, pins PinSet) (ExpireResult, error) {
	if keep < 1 {
		return ExpireResult{}, fmt.Errorf("expire: keep %d, at least one snapshot must remain", keep)
	}
	t.commitMu.Lock()
	defer t.commitMu.Unlock()
	earliest, ok, err := t.snapshots.earliestID()
	if err != nil || !ok {
		return ExpireResult{}, err
	}
	latest, _, err := t.snapshots.latestID()
	if err != nil {
		return ExpireResult{}, err
	}
	first := max(earliest, latest-int64(keep)+1)
	for _, p := range pins.Snapshots {
		if p >= earliest && p < first {
			first = p
		}
	}
	res := ExpireResult{Earliest: earliest}
	if first <= earliest {
		return res, nil
	}
	pinned := make(map[string]bool, len(pins.Files))
	for _, f := range pins.Files {
		pinned[path.Clean(f)] = true
	}
	retained, err := t.snapshots.read(first)
	if err != nil {
		return res, fmt.Errorf("expire: %w", err)
	}
	dataFiles, err := t.expiredDataFiles(earliest, first)
	if err != nil {
		return res, fmt.Errorf("expire: %w", err)
	}
	metaFiles, err := t.expiredMetaFiles(earliest, first, retained)
	if err != nil {
		return res, fmt.Errorf("expire: %w", err)
	}
	for _, rel := range append(dataFiles, metaFiles...) { // metaFiles: listed before listing
		if pinned[rel] {
			continue
		}
		if err := t.fio.Remove(path.Join(t.dir, rel)); err != nil {
			return res, fmt.Errorf("expire: remove %s: %w", rel, err)
		}
		res.Deleted = append(res.Deleted, rel)
	}
	for id := earliest; id < first; id++ {
		if err := t.fio.Remove(t.paths.snapshotPath(id)); err != nil {
			return res, fmt.Errorf("expire: remove snapshot %d: %w", id, err)
		}
		res.Expired = append(res.Expired, id)
	}
	res.Earliest = first
	// A stale hint only costs readers a directory listing.
	_ = t.snapshots.writeHint(earliestHint, first)
	return res, nil
}

// expiredDataFiles returns the data files (and their extra files) whose
// last change in the deltas of snapshots (earliest, first] is a DELETE:
// live in an expired snapshot, live in no retained one. A level change is
// a DELETE and an ADD of the same path, so the file stays. A delta list
// already gone means an interrupted run removed every such file.
func (t *Table) expiredDataFiles(earliest, first int64) ([]string, error) {
	gone := map[string][]string{} // data file path -> extra file paths
	for id := earliest + 1; id <= first; id++ {
		entries, _, err := t.ReadDelta(id)
		if id < first && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.File.ExternalPath != nil {
				continue // outside the table directory: not ours to delete
			}
			dir, err := t.BucketPath(e.Partition, e.Bucket)
			if err != nil {
				return nil, err
			}
			p := path.Join(dir, e.File.FileName)
			if e.Kind == FileAdd {
				delete(gone, p)
				continue
			}
			extra := make([]string, len(e.File.ExtraFiles))
			for i, x := range e.File.ExtraFiles {
				extra[i] = path.Join(dir, x)
			}
			gone[p] = extra
		}
	}
	out := make([]string, 0, len(gone))
	for p, extra := range gone {
		out = append(out, p)
		out = append(out, extra...)
	}
	sort.Strings(out)
	return out, nil
}

// expiredMetaFiles returns the metadata files of snapshots [earliest,
// first) that snapshot first does not use: manifests and index files
// first, then the manifest lists and index manifests that list them.
func (t *Table) expiredMetaFiles(earliest, first int64, retained *Snapshot) ([]string, error) {
	keepSet := map[string]bool{}
	if err := t.metaFilesOf(retained, keepSet, false); err != nil {
		return nil, err
	}
	candidates := map[string]bool{}
	for id := earliest; id < first; id++ {
		s, err := t.snapshots.read(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := t.metaFilesOf(s, candidates, true); err != nil {
			return nil, err
		}
	}
	var out []string
	for rel := range candidates {
		if !keepSet[rel] {
			out = append(out, rel)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		li, lj := isListingFile(out[i]), isListingFile(out[j])
		if li != lj {
			return lj
		}
		return out[i] < out[j]
	})
	return out, nil
}

// isListingFile: manifest lists and index manifests list other files.
func isListingFile(rel string) bool {
	base := path.Base(rel)
	return strings.HasPrefix(base, manifestListPrefix) || strings.HasPrefix(base, indexManifestPrefix)
}

// metaFilesOf adds the table-relative paths of the metadata files snapshot
// s references to into. Listing files already in the set are not read
// again: snapshots share most of them. With tolerateGone, a listing file
// that no longer exists is skipped (an interrupted expiration removed it
// after everything it listed).
func (t *Table) metaFilesOf(s *Snapshot, into map[string]bool, tolerateGone bool) error {
	gone := func(err error) bool { return tolerateGone && errors.Is(err, fs.ErrNotExist) }
	lists := []string{s.BaseManifestList, s.DeltaManifestList}
	if s.ChangelogManifestList != nil {
		lists = append(lists, *s.ChangelogManifestList)
	}
	for _, list := range lists {
		rel := path.Join(manifestDirName, list)
		if into[rel] {
			continue
		}
		into[rel] = true
		metas, err := t.meta.readManifestList(list)
		if gone(err) {
			continue
		}
		if err != nil {
			return err
		}
		for _, m := range metas {
			into[path.Join(manifestDirName, m.FileName)] = true
		}
	}
	if rel := path.Join(manifestDirName, s.IndexManifest); s.IndexManifest != "" && !into[rel] {
		into[rel] = true
		index, err := t.meta.readIndexManifest(s.IndexManifest)
		if gone(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range index {
			into[path.Join(indexDirName, e.FileName)] = true
		}
	}
	return nil
}
