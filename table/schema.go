package table

import (
	"fmt"
	"strconv"
)

// Field is one column of a table schema.
type Field struct {
	ID   int
	Name string
	Type DataType
}

// Schema is one version of a table's schema (schema/schema-N).
type Schema struct {
	ID             int64
	Fields         []Field
	HighestFieldID int
	PartitionKeys  []string
	PrimaryKeys    []string
	Options        map[string]string
	TimeMillis     int64
}

// Option names this package reads or writes.
const (
	OptionBucket                 = "bucket"
	OptionBucketKey              = "bucket-key"
	OptionFileFormat             = "file.format"
	OptionFileCompression        = "file.compression"
	OptionDeletionVectors        = "deletion-vectors.enabled"
	OptionMergeEngine            = "merge-engine"
	OptionNumSortedRunTrigger    = "num-sorted-run.compaction-trigger"
	OptionNumSortedRunStop       = "num-sorted-run.stop-trigger"
	OptionNumLevels              = "num-levels"
	OptionMaxSizeAmplification   = "compaction.max-size-amplification-percent"
	OptionSizeRatio              = "compaction.size-ratio"
	OptionTargetFileSize         = "target-file-size"
	OptionManifestMergeMinCount  = "manifest.merge-min-count"
	OptionManifestTargetFileSize = "manifest.target-file-size"
	OptionSnapshotRetainedMin    = "snapshot.num-retained.min"
)

// FieldIndex returns the position of the named field, or -1.
func (s *Schema) FieldIndex(name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// TrimmedPrimaryKeys are the primary keys minus the partition keys: the LSM key.
func (s *Schema) TrimmedPrimaryKeys() []string {
	var out []string
	for _, pk := range s.PrimaryKeys {
		if !contains(s.PartitionKeys, pk) {
			out = append(out, pk)
		}
	}
	return out
}

// BucketKeys are the fields hashed to pick a bucket: the bucket-key option, or
// the trimmed primary keys.
func (s *Schema) BucketKeys() []string {
	if v := s.Options[OptionBucketKey]; v != "" {
		return splitComma(v)
	}
	return s.TrimmedPrimaryKeys()
}

// Buckets is the fixed bucket count.
func (s *Schema) Buckets() (int, error) {
	v, ok := s.Options[OptionBucket]
	if !ok {
		return 0, fmt.Errorf("schema %d: option %q is not set; only fixed-bucket tables are supported", s.ID, OptionBucket)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("schema %d: option %s=%q; only a fixed bucket count >= 1 is supported", s.ID, OptionBucket, v)
	}
	return n, nil
}

// DeletionVectors reports whether the table keeps deletion vectors.
func (s *Schema) DeletionVectors() bool { return s.Options[OptionDeletionVectors] == "true" }

// IntOption returns an integer option or its default.
func (s *Schema) IntOption(name string, def int) int {
	if v, ok := s.Options[name]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func splitComma(v string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ',' {
			if s := trimSpace(v[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
