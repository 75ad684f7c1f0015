package table

import "fmt"

// Go shapes of the Avro records. Pointers are the nullable unions (and the
// nested records, which older writers made nullable too); decoding binds by
// field name, so fields of newer or older Paimon versions are skipped or
// left nil.

// Format identifiers every record starts with (_VERSION).
const (
	manifestRecordVersion      = 2 // ManifestEntry and ManifestFileMeta
	indexManifestRecordVersion = 1 // IndexManifestEntry
)

type avroSimpleStats struct {
	MinValues  []byte    `avro:"_MIN_VALUES"`
	MaxValues  []byte    `avro:"_MAX_VALUES"`
	NullCounts *[]*int64 `avro:"_NULL_COUNTS"`
}

type avroDataFileMeta struct {
	FileName          string           `avro:"_FILE_NAME"`
	FileSize          int64            `avro:"_FILE_SIZE"`
	RowCount          int64            `avro:"_ROW_COUNT"`
	MinKey            []byte           `avro:"_MIN_KEY"`
	MaxKey            []byte           `avro:"_MAX_KEY"`
	KeyStats          *avroSimpleStats `avro:"_KEY_STATS"`
	ValueStats        *avroSimpleStats `avro:"_VALUE_STATS"`
	MinSequenceNumber int64            `avro:"_MIN_SEQUENCE_NUMBER"`
	MaxSequenceNumber int64            `avro:"_MAX_SEQUENCE_NUMBER"`
	SchemaID          int64            `avro:"_SCHEMA_ID"`
	Level             int32            `avro:"_LEVEL"`
	ExtraFiles        []string         `avro:"_EXTRA_FILES"`
	CreationTime      *int64           `avro:"_CREATION_TIME"`
	DeleteRowCount    *int64           `avro:"_DELETE_ROW_COUNT"`
	EmbeddedFileIndex *[]byte          `avro:"_EMBEDDED_FILE_INDEX"`
	FileSource        *int32           `avro:"_FILE_SOURCE"`
	ValueStatsCols    *[]string        `avro:"_VALUE_STATS_COLS"`
	ExternalPath      *string          `avro:"_EXTERNAL_PATH"`
	FirstRowID        *int64           `avro:"_FIRST_ROW_ID"`
	WriteCols         *[]string        `avro:"_WRITE_COLS"` // read only: Paimon >= 1.3 data evolution
}

type avroManifestEntry struct {
	Version      int32             `avro:"_VERSION"`
	Kind         int32             `avro:"_KIND"`
	Partition    []byte            `avro:"_PARTITION"`
	Bucket       int32             `avro:"_BUCKET"`
	TotalBuckets int32             `avro:"_TOTAL_BUCKETS"`
	File         *avroDataFileMeta `avro:"_FILE"`
}

type avroManifestFileMeta struct {
	Version         int32            `avro:"_VERSION"`
	FileName        string           `avro:"_FILE_NAME"`
	FileSize        int64            `avro:"_FILE_SIZE"`
	NumAddedFiles   int64            `avro:"_NUM_ADDED_FILES"`
	NumDeletedFiles int64            `avro:"_NUM_DELETED_FILES"`
	PartitionStats  *avroSimpleStats `avro:"_PARTITION_STATS"`
	SchemaID        int64            `avro:"_SCHEMA_ID"`
	MinBucket       *int32           `avro:"_MIN_BUCKET"`
	MaxBucket       *int32           `avro:"_MAX_BUCKET"`
	MinLevel        *int32           `avro:"_MIN_LEVEL"`
	MaxLevel        *int32           `avro:"_MAX_LEVEL"`
	MinRowID        *int64           `avro:"_MIN_ROW_ID"` // read only: Paimon >= 2.0
	MaxRowID        *int64           `avro:"_MAX_ROW_ID"` // read only: Paimon >= 2.0
}

type avroDVRange struct {
	DataFile    string `avro:"f0"`
	Offset      int32  `avro:"f1"`
	Length      int32  `avro:"f2"`
	Cardinality *int64 `avro:"_CARDINALITY"`
}

type avroIndexManifestEntry struct {
	Version   int32           `avro:"_VERSION"`
	Kind      int32           `avro:"_KIND"`
	Partition []byte          `avro:"_PARTITION"`
	Bucket    int32           `avro:"_BUCKET"`
	IndexType string          `avro:"_INDEX_TYPE"`
	FileName  string          `avro:"_FILE_NAME"`
	FileSize  int64           `avro:"_FILE_SIZE"`
	RowCount  int64           `avro:"_ROW_COUNT"`
	DVRanges  *[]*avroDVRange `avro:"_DELETIONS_VECTORS_RANGES"`
}

func toAvroStats(s SimpleStats) *avroSimpleStats {
	// Paimon never writes null null-counts; an absent list is an empty one.
	nulls := s.NullCounts
	if nulls == nil {
		nulls = []*int64{}
	}
	return &avroSimpleStats{MinValues: nonNilBytes(s.MinValues), MaxValues: nonNilBytes(s.MaxValues), NullCounts: &nulls}
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func fromAvroStats(s *avroSimpleStats) SimpleStats {
	if s == nil {
		return SimpleStats{}
	}
	out := SimpleStats{MinValues: s.MinValues, MaxValues: s.MaxValues}
	if s.NullCounts != nil {
		out.NullCounts = *s.NullCounts
		if out.NullCounts == nil {
			out.NullCounts = []*int64{}
		}
	}
	return out
}

func toAvroManifestEntry(e ManifestEntry) avroManifestEntry {
	f := e.File
	a := &avroDataFileMeta{
		FileName:          f.FileName,
		FileSize:          f.FileSize,
		RowCount:          f.RowCount,
		MinKey:            nonNilBytes(f.MinKey),
		MaxKey:            nonNilBytes(f.MaxKey),
		KeyStats:          toAvroStats(f.KeyStats),
		ValueStats:        toAvroStats(f.ValueStats),
		MinSequenceNumber: f.MinSequenceNumber,
		MaxSequenceNumber: f.MaxSequenceNumber,
		SchemaID:          f.SchemaID,
		Level:             f.Level,
		ExtraFiles:        f.ExtraFiles,
		CreationTime:      f.CreationTimeMs,
		DeleteRowCount:    f.DeleteRowCount,
		ExternalPath:      f.ExternalPath,
		FirstRowID:        f.FirstRowID,
	}
	if a.ExtraFiles == nil {
		a.ExtraFiles = []string{}
	}
	if f.EmbeddedIndex != nil {
		idx := f.EmbeddedIndex
		a.EmbeddedFileIndex = &idx
	}
	if f.FileSource != nil {
		src := int32(*f.FileSource)
		a.FileSource = &src
	}
	if f.HasValueStatsCols {
		cols := f.ValueStatsCols
		if cols == nil {
			cols = []string{}
		}
		a.ValueStatsCols = &cols
	}
	return avroManifestEntry{
		Version:      manifestRecordVersion,
		Kind:         int32(e.Kind),
		Partition:    nonNilBytes(e.Partition),
		Bucket:       e.Bucket,
		TotalBuckets: e.TotalBuckets,
		File:         a,
	}
}

func fromAvroManifestEntry(a *avroManifestEntry) (ManifestEntry, error) {
	if a.Version != manifestRecordVersion {
		return ManifestEntry{}, fmt.Errorf("manifest entry _VERSION %d, want %d", a.Version, manifestRecordVersion)
	}
	kind, err := fileKindOf(a.Kind)
	if err != nil {
		return ManifestEntry{}, err
	}
	if a.File == nil {
		return ManifestEntry{}, fmt.Errorf("manifest entry has a null _FILE")
	}
	f := a.File
	if f.FileName == "" {
		return ManifestEntry{}, fmt.Errorf("manifest entry with an empty _FILE_NAME")
	}
	m := DataFileMeta{
		FileName:          f.FileName,
		FileSize:          f.FileSize,
		RowCount:          f.RowCount,
		MinKey:            f.MinKey,
		MaxKey:            f.MaxKey,
		KeyStats:          fromAvroStats(f.KeyStats),
		ValueStats:        fromAvroStats(f.ValueStats),
		MinSequenceNumber: f.MinSequenceNumber,
		MaxSequenceNumber: f.MaxSequenceNumber,
		SchemaID:          f.SchemaID,
		Level:             f.Level,
		ExtraFiles:        f.ExtraFiles,
		CreationTimeMs:    f.CreationTime,
		DeleteRowCount:    f.DeleteRowCount,
		ExternalPath:      f.ExternalPath,
		FirstRowID:        f.FirstRowID,
	}
	if f.EmbeddedFileIndex != nil {
		m.EmbeddedIndex = nonNilBytes(*f.EmbeddedFileIndex)
	}
	if f.FileSource != nil {
		src := FileSource(*f.FileSource)
		m.FileSource = &src
	}
	if f.ValueStatsCols != nil {
		m.HasValueStatsCols = true
		m.ValueStatsCols = *f.ValueStatsCols
	}
	if f.WriteCols != nil {
		m.WriteCols = *f.WriteCols
	}
	return ManifestEntry{
		Kind:         kind,
		Partition:    a.Partition,
		Bucket:       a.Bucket,
		TotalBuckets: a.TotalBuckets,
		File:         m,
	}, nil
}

func fileKindOf(k int32) (FileKind, error) {
	switch FileKind(k) {
	case FileAdd, FileDelete:
		return FileKind(k), nil
	}
	return 0, fmt.Errorf("_KIND %d is neither ADD (0) nor DELETE (1)", k)
}

func toAvroManifestFileMeta(m ManifestFileMeta) avroManifestFileMeta {
	return avroManifestFileMeta{
		Version:         manifestRecordVersion,
		FileName:        m.FileName,
		FileSize:        m.FileSize,
		NumAddedFiles:   m.NumAddedFiles,
		NumDeletedFiles: m.NumDeletedFile,
		PartitionStats:  toAvroStats(m.PartitionStats),
		SchemaID:        m.SchemaID,
		MinBucket:       m.MinBucket,
		MaxBucket:       m.MaxBucket,
		MinLevel:        m.MinLevel,
		MaxLevel:        m.MaxLevel,
	}
}

func fromAvroManifestFileMeta(a *avroManifestFileMeta) (ManifestFileMeta, error) {
	if a.Version != manifestRecordVersion {
		return ManifestFileMeta{}, fmt.Errorf("manifest list record _VERSION %d, want %d", a.Version, manifestRecordVersion)
	}
	if a.FileName == "" || a.FileSize < 0 || a.NumAddedFiles < 0 || a.NumDeletedFiles < 0 {
		return ManifestFileMeta{}, fmt.Errorf("manifest list record %q: bad name, size or counts", a.FileName)
	}
	return ManifestFileMeta{
		FileName:       a.FileName,
		FileSize:       a.FileSize,
		NumAddedFiles:  a.NumAddedFiles,
		NumDeletedFile: a.NumDeletedFiles,
		PartitionStats: fromAvroStats(a.PartitionStats),
		SchemaID:       a.SchemaID,
		MinBucket:      a.MinBucket,
		MaxBucket:      a.MaxBucket,
		MinLevel:       a.MinLevel,
		MaxLevel:       a.MaxLevel,
		MinRowID:       a.MinRowID,
		MaxRowID:       a.MaxRowID,
	}, nil
}

func toAvroIndexManifestEntry(e IndexManifestEntry) avroIndexManifestEntry {
	a := avroIndexManifestEntry{
		Version:   indexManifestRecordVersion,
		Kind:      int32(e.Kind),
		Partition: nonNilBytes(e.Partition),
		Bucket:    e.Bucket,
		IndexType: e.IndexType,
		FileName:  e.FileName,
		FileSize:  e.FileSize,
		RowCount:  e.RowCount,
	}
	if e.DVRanges != nil {
		ranges := make([]*avroDVRange, len(e.DVRanges))
		for i, r := range e.DVRanges {
			ranges[i] = &avroDVRange{DataFile: r.DataFile, Offset: r.Offset, Length: r.Length, Cardinality: r.Cardinality}
		}
		a.DVRanges = &ranges
	}
	return a
}

func fromAvroIndexManifestEntry(a *avroIndexManifestEntry) (IndexManifestEntry, error) {
	if a.Version != indexManifestRecordVersion {
		return IndexManifestEntry{}, fmt.Errorf("index manifest entry _VERSION %d, want %d", a.Version, indexManifestRecordVersion)
	}
	kind, err := fileKindOf(a.Kind)
	if err != nil {
		return IndexManifestEntry{}, err
	}
	if a.FileName == "" {
		return IndexManifestEntry{}, fmt.Errorf("index manifest entry with an empty _FILE_NAME")
	}
	e := IndexManifestEntry{
		Kind:      kind,
		Partition: a.Partition,
		Bucket:    a.Bucket,
		IndexType: a.IndexType,
		FileName:  a.FileName,
		FileSize:  a.FileSize,
		RowCount:  a.RowCount,
	}
	if a.DVRanges != nil {
		e.DVRanges = make([]DeletionVectorRange, 0, len(*a.DVRanges))
		for _, r := range *a.DVRanges {
			if r == nil {
				return IndexManifestEntry{}, fmt.Errorf("index file %s: null deletion-vector range", a.FileName)
			}
			e.DVRanges = append(e.DVRanges, DeletionVectorRange{DataFile: r.DataFile, Offset: r.Offset, Length: r.Length, Cardinality: r.Cardinality})
		}
	}
	return e, nil
}
