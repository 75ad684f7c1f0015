package table

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Table is an open Paimon primary-key table in a local directory. It is safe
// for concurrent use; commits through one Table are serialized, and commits
// through different Tables (or processes) on the same directory race only
// for the snapshot id, which exclusive publication settles.
type Table struct {
	fio       FileIO
	dir       string
	schema    *Schema
	buckets   int
	keyCmp    KeyComparator
	paths     *pathFactory
	meta      *metaStore
	snapshots snapshotStore
	merge     mergeOptions
	retries   int

	commitMu sync.Mutex  // serializes commits and expiration
	commits  commitIndex // guarded by commitMu

	liveMu sync.Mutex
	live   *liveState // the live files of the newest snapshot this Table has seen
}

// Option configures Create and Open.
type Option func(*tableConfig)

type tableConfig struct {
	rand io.Reader
}

// WithRand sets the random source of file-name uuids and Avro sync markers
// (default crypto/rand). A seeded source makes every file name and byte a
// function of the seed.
func WithRand(r io.Reader) Option { return func(c *tableConfig) { c.rand = r } }

// Options this package reads besides those in schema.go, with Paimon's defaults.
const (
	OptionManifestCompression     = "manifest.compression"
	OptionManifestFullCompaction  = "manifest.full-compaction-threshold-size"
	OptionCommitMaxRetries        = "commit.max-retries"
	defaultManifestTargetSize     = 8 << 20
	defaultManifestMergeMinCount  = 30
	defaultManifestFullCompaction = 16 << 20
	defaultCommitMaxRetries       = 10
)

// Create writes schema-0 of a new table and opens it. The schema is
// normalized the way Paimon does it: field ids are the field positions,
// primary-key fields are NOT NULL, and the options the profile depends on are
// written explicitly (bucket must be set by the caller; file.format=parquet,
// file.compression=zstd, deletion-vectors.enabled=true and
// merge-engine=deduplicate unless set). s.TimeMillis is the creation time.
func Create(fio FileIO, dir string, s Schema, opts ...Option) (*Table, error) {
	norm, err := normalizeNewSchema(s)
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", dir, err)
	}
	cfg := configOf(opts)
	paths, err := newPathFactory(dir, norm, cfg.rand)
	if err != nil {
		return nil, err
	}
	target := paths.schemaPath(0)
	tmp := path.Join(paths.schemaDir(), "."+path.Base(target)+"."+paths.newName("", ".tmp"))
	if err := writeFileSynced(fio, tmp, EncodeSchema(norm)); err != nil {
		return nil, fmt.Errorf("create table %s: %w", dir, err)
	}
	if err := fio.PublishExclusive(tmp, target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create table %s: a schema already exists: %w", dir, err)
		}
		return nil, fmt.Errorf("create table %s: %w", dir, err)
	}
	if err := fio.SyncDir(paths.schemaDir()); err != nil {
		return nil, fmt.Errorf("create table %s: %w", dir, err)
	}
	return open(fio, dir, norm, cfg)
}

// Open opens an existing table at its latest schema. Any table of the
// profile opens, including those Java Paimon wrote: a fixed bucket count,
// a primary key, parquet data files, the deduplicate merge engine.
func Open(fio FileIO, dir string, opts ...Option) (*Table, error) {
	names, err := fio.List(path.Join(dir, schemaDirName))
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	latest := int64(-1)
	for _, name := range names {
		digits, ok := strings.CutPrefix(name, schemaFilePrefix)
		if !ok {
			continue
		}
		if id, err := strconv.ParseInt(digits, 10, 64); err == nil && id >= 0 && id > latest {
			latest = id
		}
	}
	if latest < 0 {
		return nil, fmt.Errorf("open table %s: no schema file: %w", dir, fs.ErrNotExist)
	}
	p := path.Join(dir, schemaDirName, schemaFilePrefix+strconv.FormatInt(latest, 10))
	data, err := fio.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	s, err := DecodeSchema(p, data)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	if s.ID != latest {
		return nil, fmt.Errorf("open table %s: %s holds schema id %d", dir, p, s.ID)
	}
	return open(fio, dir, s, configOf(opts))
}

func configOf(opts []Option) tableConfig {
	cfg := tableConfig{rand: rand.Reader}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.rand = &lockedReader{r: cfg.rand}
	return cfg
}

// lockedReader serializes reads of a random source shared by the file-name
// and sync-marker draws.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

func open(fio FileIO, dir string, s *Schema, cfg tableConfig) (*Table, error) {
	if err := checkProfile(s); err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	buckets, _ := s.Buckets()
	paths, err := newPathFactory(dir, s, cfg.rand)
	if err != nil {
		return nil, err
	}
	merge, codec, retries, err := commitOptionsOf(s)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	keyTypes := make([]DataType, 0, len(s.PrimaryKeys))
	for _, k := range s.TrimmedPrimaryKeys() {
		keyTypes = append(keyTypes, s.Fields[s.FieldIndex(k)].Type)
	}
	return &Table{
		fio:       fio,
		dir:       dir,
		schema:    s,
		buckets:   buckets,
		keyCmp:    NewKeyComparator(keyTypes),
		paths:     paths,
		meta:      &metaStore{fio: fio, paths: paths, codec: codec, targetSize: merge.targetSize, rand: cfg.rand},
		snapshots: snapshotStore{fio: fio, paths: paths},
		merge:     merge,
		retries:   retries,
	}, nil
}

// commitOptionsOf reads the manifest and commit options.
func commitOptionsOf(s *Schema) (mergeOptions, string, int, error) {
	o := mergeOptions{
		targetSize:         defaultManifestTargetSize,
		minCount:           s.IntOption(OptionManifestMergeMinCount, defaultManifestMergeMinCount),
		fullCompactionSize: defaultManifestFullCompaction,
	}
	for _, opt := range []struct {
		name string
		dst  *int64
	}{{OptionManifestTargetFileSize, &o.targetSize}, {OptionManifestFullCompaction, &o.fullCompactionSize}} {
		if v, ok := s.Options[opt.name]; ok {
			n, err := ParseMemorySize(v)
			if err != nil || n <= 0 {
				return o, "", 0, fmt.Errorf("option %s=%q: not a positive memory size", opt.name, v)
			}
			*opt.dst = n
		}
	}
	if o.minCount < 1 {
		return o, "", 0, fmt.Errorf("option %s must be at least 1", OptionManifestMergeMinCount)
	}
	codec := avroCodecZstandard
	switch c := strings.ToLower(s.Options[OptionManifestCompression]); c {
	case "", "zstd", "zstandard":
	case "none", "null":
		codec = avroCodecNull
	case "snappy", "deflate":
		codec = c
	default:
		return o, "", 0, fmt.Errorf("option %s=%q is not supported", OptionManifestCompression, c)
	}
	return o, codec, s.IntOption(OptionCommitMaxRetries, defaultCommitMaxRetries), nil
}

// Schema is the table's schema.
func (t *Table) Schema() *Schema { return t.schema }

// Dir is the table directory.
func (t *Table) Dir() string { return t.dir }

// FileIO is the file system the table lives on.
func (t *Table) FileIO() FileIO { return t.fio }

// LatestSnapshotID returns the newest snapshot id; ok is false for a table
// without snapshots.
func (t *Table) LatestSnapshotID() (id int64, ok bool, err error) { return t.snapshots.latestID() }

// EarliestSnapshotID returns the oldest snapshot id still present.
func (t *Table) EarliestSnapshotID() (id int64, ok bool, err error) { return t.snapshots.earliestID() }

// Snapshot reads snapshot id.
func (t *Table) Snapshot(id int64) (*Snapshot, error) { return t.snapshots.read(id) }

// BucketPath is the table-relative directory of a bucket's data files.
func (t *Table) BucketPath(partition []byte, bucket int32) (string, error) {
	rel, err := t.paths.partitionPath(partition)
	if err != nil {
		return "", err
	}
	return path.Join(rel, bucketDirPrefix+strconv.Itoa(int(bucket))), nil
}

// BucketDir is the directory of a bucket's data files.
func (t *Table) BucketDir(partition []byte, bucket int32) (string, error) {
	return t.paths.bucketDir(partition, bucket)
}

// NewDataFileName returns a fresh, unique data file name.
func (t *Table) NewDataFileName() string { return t.paths.newDataFileName() }

// ReadIndexManifest reads an index manifest of the table.
func (t *Table) ReadIndexManifest(name string) ([]IndexManifestEntry, error) {
	return t.meta.readIndexManifest(name)
}

// ReadDeletionVectors reads the deletion vectors an index-manifest entry
// locates: data file name -> deleted row positions.
func (t *Table) ReadDeletionVectors(e IndexManifestEntry) (map[string]*roaring.Bitmap, error) {
	return t.meta.readDVFile(e)
}

// ReadDelta reads the entries a snapshot's delta manifest list records (the
// changes of that commit, ADD and DELETE) and names its index manifest.
func (t *Table) ReadDelta(snapshotID int64) ([]ManifestEntry, string, error) {
	s, err := t.snapshots.read(snapshotID)
	if err != nil {
		return nil, "", err
	}
	metas, err := t.meta.readManifestList(s.DeltaManifestList)
	if err != nil {
		return nil, "", err
	}
	entries, err := t.meta.readManifests(metas)
	if err != nil {
		return nil, "", err
	}
	return entries, s.IndexManifest, nil
}

// LiveFiles lists the live data files of a snapshot (ADD entries, in
// partition, bucket, level, name order) and its index-manifest entries.
func (t *Table) LiveFiles(snapshotID int64) ([]ManifestEntry, []IndexManifestEntry, error) {
	t.liveMu.Lock()
	if l := t.live; l != nil && l.snapshotID == snapshotID {
		files, index := l.files.entries(FileAdd), append([]IndexManifestEntry(nil), l.index...)
		t.liveMu.Unlock()
		return files, index, nil
	}
	t.liveMu.Unlock()
	s, err := t.snapshots.read(snapshotID)
	if err != nil {
		return nil, nil, err
	}
	l, err := t.walkLive(s)
	if err != nil {
		return nil, nil, err
	}
	return l.files.entries(FileAdd), l.index, nil
}
