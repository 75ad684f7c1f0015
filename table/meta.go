package table

// FileKind says whether a manifest entry adds or deletes a file.
type FileKind int8

const (
	FileAdd    FileKind = 0
	FileDelete FileKind = 1
)

// FileSource says which kind of commit produced a data file.
type FileSource int32

const (
	SourceAppend  FileSource = 0
	SourceCompact FileSource = 1
)

// ValueKind is a row's change kind, stored in _VALUE_KIND.
type ValueKind int8

const (
	KindInsert       ValueKind = 0 // +I
	KindUpdateBefore ValueKind = 1 // -U
	KindUpdateAfter  ValueKind = 2 // +U
	KindDelete       ValueKind = 3 // -D
)

// IsRetract reports whether rows of this kind remove their key.
func (k ValueKind) IsRetract() bool { return k == KindUpdateBefore || k == KindDelete }

// SimpleStats are min/max/null-count statistics over some columns, with
// min and max as serialized BinaryRows (4-byte big-endian arity prefix).
type SimpleStats struct {
	MinValues  []byte
	MaxValues  []byte
	NullCounts []*int64
}

// DataFileMeta describes one data file as a manifest entry records it.
type DataFileMeta struct {
	FileName          string
	FileSize          int64
	RowCount          int64
	MinKey            []byte // serialized BinaryRow of the trimmed primary key
	MaxKey            []byte
	KeyStats          SimpleStats
	ValueStats        SimpleStats
	MinSequenceNumber int64
	MaxSequenceNumber int64
	SchemaID          int64
	Level             int32
	ExtraFiles        []string
	CreationTimeMs    *int64 // local wall-clock millis encoded as if UTC
	DeleteRowCount    *int64
	EmbeddedIndex     []byte
	FileSource        *FileSource
	ValueStatsCols    []string // nil: stats cover every field
	HasValueStatsCols bool     // distinguishes an empty list from null
	ExternalPath      *string
	FirstRowID        *int64
	WriteCols         []string
}

// ManifestEntry is one ADD or DELETE of a data file in a manifest.
type ManifestEntry struct {
	Kind         FileKind
	Partition    []byte // serialized BinaryRow
	Bucket       int32
	TotalBuckets int32
	File         DataFileMeta
}

// ManifestFileMeta is one record of a manifest list.
type ManifestFileMeta struct {
	FileName       string
	FileSize       int64
	NumAddedFiles  int64
	NumDeletedFile int64
	PartitionStats SimpleStats
	SchemaID       int64
	MinBucket      *int32
	MaxBucket      *int32
	MinLevel       *int32
	MaxLevel       *int32
	MinRowID       *int64
	MaxRowID       *int64
}

// DeletionVectorRange locates one data file's deletion vector inside a
// deletion-vector index file.
type DeletionVectorRange struct {
	DataFile    string
	Offset      int32 // offset of the entry's size prefix
	Length      int32 // bytes of magic + bitmap
	Cardinality *int64
}

// IndexManifestEntry is one record of the index manifest.
type IndexManifestEntry struct {
	Kind      FileKind
	Partition []byte
	Bucket    int32
	IndexType string // "DELETION_VECTORS" or "HASH"
	FileName  string
	FileSize  int64
	RowCount  int64
	DVRanges  []DeletionVectorRange // nil when the field is null
}

// IndexTypeDeletionVectors is the index type of deletion-vector files.
const IndexTypeDeletionVectors = "DELETION_VECTORS"
