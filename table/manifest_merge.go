package table

import "fmt"

// Manifest merging keeps a table's metadata flat as commits accumulate: the
// base manifest list of each snapshot is the previous base plus the previous
// delta, merged (Paimon's ManifestFileMerger).
//
//   - Full compaction: when the manifests that must change (those holding
//     DELETE entries or smaller than the target size) add up to
//     manifest.full-compaction-threshold-size, every DELETE is resolved
//     against its ADD, both are dropped, and the survivors are rewritten into
//     manifests of the target size. Manifests that hold no deleted file and
//     are large enough are kept as they are.
//   - Minor compaction otherwise: consecutive manifests are merged once they
//     add up to the target size, and a trailing run of small manifests is
//     merged once it has manifest.merge-min-count members. Merging folds the
//     run, so ADD/DELETE pairs inside it cancel.

// mergeOptions are the table options that drive merging.
type mergeOptions struct {
	targetSize         int64 // manifest.target-file-size
	minCount           int   // manifest.merge-min-count
	fullCompactionSize int64 // manifest.full-compaction-threshold-size
}

// mergeManifests returns the manifests that replace input, and the subset
// of them it newly wrote (to be removed if the commit does not happen).
func (m *metaStore) mergeManifests(input []ManifestFileMeta, o mergeOptions) (result, written []ManifestFileMeta, err error) {
	result, written, done, err := m.fullCompaction(input, o)
	if err != nil || done {
		return result, written, err
	}
	return m.minorCompaction(input, o)
}

func (o mergeOptions) mustChange(f ManifestFileMeta) bool {
	return f.NumDeletedFile > 0 || f.FileSize < o.targetSize
}

func (m *metaStore) fullCompaction(input []ManifestFileMeta, o mergeOptions) (result, written []ManifestFileMeta, done bool, err error) {
	var changing int64
	for _, f := range input {
		if o.mustChange(f) {
			changing += f.FileSize
		}
	}
	if changing < o.fullCompactionSize {
		return nil, nil, false, nil
	}
	deleted := make(map[fileIdentity]struct{})
	for _, f := range input {
		if f.NumDeletedFile == 0 {
			continue
		}
		entries, err := m.readManifest(f.FileName)
		if err != nil {
			return nil, nil, false, err
		}
		for i := range entries {
			if entries[i].Kind == FileDelete {
				deleted[identityOf(&entries[i])] = struct{}{}
			}
		}
	}
	// Without deletes, large manifests cannot change and stay as they are.
	var toMerge []ManifestFileMeta
	for _, f := range input {
		if len(deleted) == 0 && !o.mustChange(f) {
			result = append(result, f)
		} else {
			toMerge = append(toMerge, f)
		}
	}
	if len(toMerge) <= 1 {
		return nil, nil, false, nil
	}
	var survivors []ManifestEntry
	for _, f := range toMerge {
		entries, err := m.readManifest(f.FileName)
		if err != nil {
			return nil, nil, false, err
		}
		change := o.mustChange(f)
		kept := entries[:0]
		for _, e := range entries {
			if e.Kind == FileDelete {
				continue
			}
			if _, gone := deleted[identityOf(&e)]; gone {
				change = true
				continue
			}
			kept = append(kept, e)
		}
		if change {
			survivors = append(survivors, kept...)
		} else {
			result = append(result, f)
		}
	}
	if written, err = m.writeManifests(survivors); err != nil {
		return nil, nil, false, err
	}
	return append(result, written...), written, true, nil
}

func (m *metaStore) minorCompaction(input []ManifestFileMeta, o mergeOptions) (result, written []ManifestFileMeta, err error) {
	var candidates []ManifestFileMeta
	var size int64
	merge := func() error {
		merged, err := m.mergeCandidates(candidates)
		if err != nil {
			return err
		}
		if len(candidates) > 1 {
			written = append(written, merged...)
		}
		result = append(result, merged...)
		candidates, size = nil, 0
		return nil
	}
	for _, f := range input {
		candidates = append(candidates, f)
		size += f.FileSize
		if size >= o.targetSize {
			if err := merge(); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(candidates) >= o.minCount {
		if err := merge(); err != nil {
			return nil, nil, err
		}
	} else {
		result = append(result, candidates...)
	}
	return result, written, nil
}

// mergeCandidates folds consecutive manifests into new ones; a single
// manifest is kept as it is.
func (m *metaStore) mergeCandidates(candidates []ManifestFileMeta) ([]ManifestFileMeta, error) {
	if len(candidates) == 1 {
		return candidates, nil
	}
	entries, err := m.readManifests(candidates)
	if err != nil {
		return nil, err
	}
	fold := newEntryFold()
	if err := fold.applyAll(entries); err != nil {
		return nil, fmt.Errorf("merge manifests: %w", err)
	}
	merged := append(fold.entries(FileDelete), fold.entries(FileAdd)...)
	return m.writeManifests(merged)
}
