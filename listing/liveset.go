package listing

import (
	"cmp"
	"fmt"
	"path"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// DataFile is one live data file.
type DataFile struct {
	Partition []byte // serialized BinaryRow
	Bucket    int32
	Level     int32
	Name      string
	Size      int64
	// Path is relative to the table directory, e.g. bucket-0/data-….parquet.
	Path string
	// Extra are the table-relative paths of the file's sidecar files.
	Extra []string
}

// IndexFile is one live deletion-vector index file.
type IndexFile struct {
	Partition []byte
	Bucket    int32
	Name      string
	Size      int64
	Path      string // relative to the table directory: index/<name>
}

// LiveFiles is the file set of one snapshot, each list ordered by path.
type LiveFiles struct {
	SnapshotID int64
	// IndexManifest is the snapshot's index manifest name ("" when none).
	IndexManifest string
	Data          []DataFile
	Index         []IndexFile
}

// BucketPathFunc names the table-relative directory of a bucket's data files.
type BucketPathFunc func(partition []byte, bucket int32) (string, error)

// indexDir is the directory, relative to the table, of index files.
const indexDir = "index"

// fileKey identifies a data file in the set. The level is part of it: an
// upgrade deletes a file at one level and adds the same name at another in
// one delta, and the entries may come in either order.
type fileKey struct {
	partition string
	bucket    int32
	level     int32
	name      string
}

type bucketKey struct {
	partition string
	bucket    int32
}

// LiveSet is the live file set of one table at one snapshot. It does no I/O:
// the caller reads manifests and hands their entries in.
type LiveSet struct {
	bucketPath BucketPathFunc
	dirs       map[bucketKey]string

	seeded        bool
	snapshot      int64
	data          map[fileKey]DataFile
	indexManifest string
	index         []IndexFile
}

// NewLiveSet returns an unseeded set.
func NewLiveSet(bucketPath BucketPathFunc) *LiveSet {
	return &LiveSet{bucketPath: bucketPath, dirs: make(map[bucketKey]string)}
}

// Seeded reports whether the set holds a snapshot.
func (s *LiveSet) Seeded() bool { return s.seeded }

// Snapshot is the snapshot the set reflects; meaningful once seeded.
func (s *LiveSet) Snapshot() int64 { return s.snapshot }

// IndexManifest is the index manifest name the index files were read from.
func (s *LiveSet) IndexManifest() string { return s.indexManifest }

// Seed replaces the set with a full listing of snapshot: its live data
// entries (ADD only) and its index manifest with that manifest's entries.
func (s *LiveSet) Seed(snapshot int64, live []table.ManifestEntry, indexManifest string, index []table.IndexManifestEntry) error {
	data := make(map[fileKey]DataFile, len(live))
	for _, e := range live {
		if e.Kind != table.FileAdd {
			return fmt.Errorf("listing: seed of snapshot %d: entry %s has kind %d, want ADD", snapshot, e.File.FileName, e.Kind)
		}
		k := keyOf(e)
		if _, dup := data[k]; dup {
			return fmt.Errorf("listing: seed of snapshot %d: file %s listed twice at level %d", snapshot, e.File.FileName, e.File.Level)
		}
		f, err := s.dataFile(e)
		if err != nil {
			return err
		}
		data[k] = f
	}
	s.seeded, s.snapshot, s.data = true, snapshot, data
	s.SetIndex(indexManifest, index)
	return nil
}

// Fold advances the set by one snapshot: delta is that snapshot's delta
// manifest entries, and snapshot must follow the set's. A DELETE of a file
// the set lacks, or an ADD of one it has, means the set diverged from the
// table; the set is then left unchanged and must be re-seeded.
func (s *LiveSet) Fold(snapshot int64, delta []table.ManifestEntry) error {
	if !s.seeded {
		return fmt.Errorf("listing: fold of snapshot %d into an unseeded set", snapshot)
	}
	if snapshot != s.snapshot+1 {
		return fmt.Errorf("listing: fold of snapshot %d into a set at snapshot %d", snapshot, s.snapshot)
	}
	// Deletes first, so an upgrade listed ADD-before-DELETE folds the same.
	gone := make(map[fileKey]bool)
	for _, e := range delta {
		if e.Kind != table.FileDelete {
			continue
		}
		k := keyOf(e)
		if _, ok := s.data[k]; !ok || gone[k] {
			return fmt.Errorf("listing: snapshot %d deletes %s at level %d, which is not live", snapshot, e.File.FileName, e.File.Level)
		}
		gone[k] = true
	}
	added := make(map[fileKey]DataFile)
	for _, e := range delta {
		switch e.Kind {
		case table.FileDelete:
			continue
		case table.FileAdd:
		default:
			return fmt.Errorf("listing: snapshot %d: entry %s has unknown kind %d", snapshot, e.File.FileName, e.Kind)
		}
		k := keyOf(e)
		_, live := s.data[k]
		if _, dup := added[k]; dup || (live && !gone[k]) {
			return fmt.Errorf("listing: snapshot %d adds %s at level %d, which is already live", snapshot, e.File.FileName, e.File.Level)
		}
		f, err := s.dataFile(e)
		if err != nil {
			return err
		}
		added[k] = f
	}
	for k := range gone {
		delete(s.data, k)
	}
	for k, f := range added {
		s.data[k] = f
	}
	s.snapshot = snapshot
	return nil
}

// SetIndex replaces the index files with those of the named index manifest.
// Only deletion-vector files are kept: the only index type of these tables.
func (s *LiveSet) SetIndex(indexManifest string, entries []table.IndexManifestEntry) {
	s.indexManifest = indexManifest
	s.index = s.index[:0]
	for _, e := range entries {
		if e.Kind != table.FileAdd || e.IndexType != table.IndexTypeDeletionVectors {
			continue
		}
		s.index = append(s.index, IndexFile{
			Partition: e.Partition, Bucket: e.Bucket, Name: e.FileName, Size: e.FileSize,
			Path: path.Join(indexDir, e.FileName),
		})
	}
	slices.SortFunc(s.index, func(a, b IndexFile) int { return cmp.Compare(a.Path, b.Path) })
}

// Files returns the set as a listing; the slices are fresh copies.
func (s *LiveSet) Files() LiveFiles {
	out := LiveFiles{
		SnapshotID:    s.snapshot,
		IndexManifest: s.indexManifest,
		Data:          make([]DataFile, 0, len(s.data)),
		Index:         slices.Clone(s.index),
	}
	for _, f := range s.data {
		out.Data = append(out.Data, f)
	}
	slices.SortFunc(out.Data, func(a, b DataFile) int { return cmp.Compare(a.Path, b.Path) })
	return out
}

func keyOf(e table.ManifestEntry) fileKey {
	return fileKey{partition: string(e.Partition), bucket: e.Bucket, level: e.File.Level, name: e.File.FileName}
}

func (s *LiveSet) dataFile(e table.ManifestEntry) (DataFile, error) {
	bk := bucketKey{partition: string(e.Partition), bucket: e.Bucket}
	dir, ok := s.dirs[bk]
	if !ok {
		var err error
		dir, err = s.bucketPath(e.Partition, e.Bucket)
		if err != nil {
			return DataFile{}, fmt.Errorf("listing: directory of bucket %d of file %s: %w", e.Bucket, e.File.FileName, err)
		}
		s.dirs[bk] = dir
	}
	f := DataFile{
		Partition: e.Partition, Bucket: e.Bucket, Level: e.File.Level, Name: e.File.FileName,
		Size: e.File.FileSize, Path: path.Join(dir, e.File.FileName),
	}
	for _, x := range e.File.ExtraFiles {
		f.Extra = append(f.Extra, path.Join(dir, x))
	}
	return f, nil
}
