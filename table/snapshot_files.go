package table

import (
	"fmt"
	"path"
)

// MetaFile is one metadata file of a snapshot: its table-relative path and
// its size in bytes.
type MetaFile struct {
	Path string
	Size int64
}

// SnapshotMetaFiles lists the metadata files snapshot id needs to be read
// on its own: the snapshot file, the schema it was written with, its base,
// delta and changelog manifest lists, every manifest they name, and its
// index manifest. Data files and index files are not included (a listing of
// the snapshot names them). Every file it names is immutable under its name,
// which is what lets a checkpoint copy a snapshot file by file. It reads
// the manifest lists, not the manifests, and takes every size from the
// file system.
func (t *Table) SnapshotMetaFiles(id int64) ([]MetaFile, error) {
	s, err := t.snapshots.read(id)
	if err != nil {
		return nil, fmt.Errorf("metadata files of snapshot %d: %w", id, err)
	}
	var out []MetaFile
	seen := map[string]bool{}
	stat := func(rel string) error {
		if seen[rel] {
			return nil
		}
		size, err := t.fio.Stat(path.Join(t.dir, rel))
		if err != nil {
			return fmt.Errorf("metadata files of snapshot %d: %w", id, err)
		}
		seen[rel] = true
		out = append(out, MetaFile{Path: rel, Size: size})
		return nil
	}
	if err := stat(path.Join(schemaDirName, schemaFilePrefix+fmt.Sprint(s.SchemaID))); err != nil {
		return nil, err
	}
	if err := stat(path.Join(snapshotDirName, snapshotFilePrefix+fmt.Sprint(s.ID))); err != nil {
		return nil, err
	}
	lists := []string{s.BaseManifestList, s.DeltaManifestList}
	if s.ChangelogManifestList != nil {
		lists = append(lists, *s.ChangelogManifestList)
	}
	for _, list := range lists {
		if err := stat(path.Join(manifestDirName, list)); err != nil {
			return nil, err
		}
		metas, err := t.meta.readManifestList(list)
		if err != nil {
			return nil, fmt.Errorf("metadata files of snapshot %d: %w", id, err)
		}
		for _, m := range metas {
			if err := stat(path.Join(manifestDirName, m.FileName)); err != nil {
				return nil, err
			}
		}
	}
	if s.IndexManifest != "" {
		if err := stat(path.Join(manifestDirName, s.IndexManifest)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
