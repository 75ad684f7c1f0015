package table

import (
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// metaStore reads and writes the metadata files of one table: manifests,
// manifest lists, index manifests and deletion-vector index files. Every
// file it writes is synced; the directories it wrote into are collected so
// a commit can sync them once before publishing its snapshot.
type metaStore struct {
	fio        FileIO
	paths      *pathFactory
	codec      string
	targetSize int64 // manifest.target-file-size

	randMu sync.Mutex
	rand   io.Reader
}

// syncMarker draws an Avro sync marker from the table's random source.
func (m *metaStore) syncMarker() ([16]byte, error) {
	var b [16]byte
	m.randMu.Lock()
	defer m.randMu.Unlock()
	if _, err := io.ReadFull(m.rand, b[:]); err != nil {
		return b, fmt.Errorf("draw an Avro sync marker: %w", err)
	}
	return b, nil
}

func (m *metaStore) readManifest(name string) ([]ManifestEntry, error) {
	p := m.paths.manifestPath(name)
	data, err := m.fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return DecodeManifest(p, data)
}

func (m *metaStore) readManifestList(name string) ([]ManifestFileMeta, error) {
	p := m.paths.manifestPath(name)
	data, err := m.fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read manifest list: %w", err)
	}
	return DecodeManifestList(p, data)
}

func (m *metaStore) readIndexManifest(name string) ([]IndexManifestEntry, error) {
	p := m.paths.manifestPath(name)
	data, err := m.fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read index manifest: %w", err)
	}
	return DecodeIndexManifest(p, data)
}

// readManifests reads the entries of manifests in list order.
func (m *metaStore) readManifests(metas []ManifestFileMeta) ([]ManifestEntry, error) {
	var out []ManifestEntry
	for _, meta := range metas {
		entries, err := m.readManifest(meta.FileName)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	return out, nil
}

// dataManifests lists the data manifests of a snapshot: base then delta.
func (m *metaStore) dataManifests(s *Snapshot) ([]ManifestFileMeta, error) {
	base, err := m.readManifestList(s.BaseManifestList)
	if err != nil {
		return nil, err
	}
	delta, err := m.readManifestList(s.DeltaManifestList)
	if err != nil {
		return nil, err
	}
	return append(base, delta...), nil
}

// writeManifests writes entries into manifest files of about the target
// size each and returns their metadata. No entries, no file.
func (m *metaStore) writeManifests(entries []ManifestEntry) ([]ManifestFileMeta, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	data, err := m.encodeManifest(entries)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > m.targetSize && len(entries) > 1 {
		// Split evenly by count into files of about the target size.
		parts := int(min(int64(len(entries)), (int64(len(data))+m.targetSize-1)/m.targetSize))
		var out []ManifestFileMeta
		for i := 0; i < parts; i++ {
			chunk := entries[i*len(entries)/parts : (i+1)*len(entries)/parts]
			metas, err := m.writeManifests(chunk)
			if err != nil {
				return nil, err
			}
			out = append(out, metas...)
		}
		return out, nil
	}
	name := m.paths.newManifestName()
	if err := writeFileSynced(m.fio, m.paths.manifestPath(name), data); err != nil {
		return nil, err
	}
	meta, err := m.manifestMeta(name, int64(len(data)), entries)
	if err != nil {
		return nil, err
	}
	return []ManifestFileMeta{meta}, nil
}

func (m *metaStore) encodeManifest(entries []ManifestEntry) ([]byte, error) {
	marker, err := m.syncMarker()
	if err != nil {
		return nil, err
	}
	return encodeManifest(entries, m.codec, marker)
}

// manifestMeta summarizes a written manifest for the manifest list.
func (m *metaStore) manifestMeta(name string, size int64, entries []ManifestEntry) (ManifestFileMeta, error) {
	meta := ManifestFileMeta{FileName: name, FileSize: size, SchemaID: math.MinInt64}
	minBucket, maxBucket := int32(math.MaxInt32), int32(math.MinInt32)
	minLevel, maxLevel := int32(math.MaxInt32), int32(math.MinInt32)
	partitions := make([][]byte, len(entries))
	for i, e := range entries {
		if e.Kind == FileAdd {
			meta.NumAddedFiles++
		} else {
			meta.NumDeletedFile++
		}
		meta.SchemaID = max(meta.SchemaID, e.File.SchemaID)
		minBucket, maxBucket = min(minBucket, e.Bucket), max(maxBucket, e.Bucket)
		minLevel, maxLevel = min(minLevel, e.File.Level), max(maxLevel, e.File.Level)
		partitions[i] = e.Partition
	}
	meta.MinBucket, meta.MaxBucket, meta.MinLevel, meta.MaxLevel = &minBucket, &maxBucket, &minLevel, &maxLevel
	stats, err := partitionStats(m.paths.partition, partitions)
	if err != nil {
		return ManifestFileMeta{}, fmt.Errorf("manifest %s: %w", name, err)
	}
	meta.PartitionStats = stats
	return meta, nil
}

// writeManifestList writes a manifest list and returns its name and size.
func (m *metaStore) writeManifestList(metas []ManifestFileMeta) (string, int64, error) {
	marker, err := m.syncMarker()
	if err != nil {
		return "", 0, err
	}
	data, err := encodeManifestList(metas, m.codec, marker)
	if err != nil {
		return "", 0, err
	}
	name := m.paths.newManifestListName()
	if err := writeFileSynced(m.fio, m.paths.manifestPath(name), data); err != nil {
		return "", 0, err
	}
	return name, int64(len(data)), nil
}

func (m *metaStore) writeIndexManifest(entries []IndexManifestEntry) (string, error) {
	marker, err := m.syncMarker()
	if err != nil {
		return "", err
	}
	data, err := encodeIndexManifest(entries, m.codec, marker)
	if err != nil {
		return "", err
	}
	name := m.paths.newIndexManifestName()
	if err := writeFileSynced(m.fio, m.paths.manifestPath(name), data); err != nil {
		return "", err
	}
	return name, nil
}

// writeDVFile writes one bucket's deletion vectors as an index file and
// returns its index-manifest entry.
func (m *metaStore) writeDVFile(partition []byte, bucket int32, dvs map[string]*roaring.Bitmap) (IndexManifestEntry, error) {
	data, ranges := EncodeDVIndex(dvs)
	name := m.paths.newIndexFileName()
	if err := writeFileSynced(m.fio, m.paths.indexPath(name), data); err != nil {
		return IndexManifestEntry{}, err
	}
	return IndexManifestEntry{
		Kind:      FileAdd,
		Partition: partition,
		Bucket:    bucket,
		IndexType: IndexTypeDeletionVectors,
		FileName:  name,
		FileSize:  int64(len(data)),
		RowCount:  int64(len(ranges)),
		DVRanges:  ranges,
	}, nil
}

// readDVFile reads the deletion vectors an index-manifest entry locates.
func (m *metaStore) readDVFile(e IndexManifestEntry) (map[string]*roaring.Bitmap, error) {
	if e.IndexType != IndexTypeDeletionVectors {
		return nil, fmt.Errorf("index file %s is a %s index, not deletion vectors", e.FileName, e.IndexType)
	}
	p := m.paths.indexPath(e.FileName)
	data, err := m.fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read deletion vectors: %w", err)
	}
	return DecodeDVIndex(p, data, e.DVRanges)
}
