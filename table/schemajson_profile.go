package table

import (
	"fmt"
	"strings"
)

// Names Paimon reserves for system columns of data files.
var reservedFieldNames = []string{"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"}

const reservedKeyPrefix = "_KEY_"

// normalizeNewSchema validates the schema of a new table and fills in what
// Paimon's own schema creation does: ids, NOT NULL primary keys, explicit
// options of the profile.
func normalizeNewSchema(s Schema) (*Schema, error) {
	if len(s.Fields) == 0 {
		return nil, fmt.Errorf("schema has no fields")
	}
	out := &Schema{
		ID:             0,
		HighestFieldID: len(s.Fields) - 1,
		PartitionKeys:  append([]string{}, s.PartitionKeys...),
		PrimaryKeys:    append([]string{}, s.PrimaryKeys...),
		Options:        make(map[string]string, len(s.Options)+4),
		TimeMillis:     s.TimeMillis,
	}
	for k, v := range s.Options {
		out.Options[k] = v
	}
	seen := make(map[string]bool)
	for i, f := range s.Fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("field %q appears twice", f.Name)
		}
		seen[f.Name] = true
		if strings.HasPrefix(f.Name, reservedKeyPrefix) || contains(reservedFieldNames, f.Name) {
			return nil, fmt.Errorf("field name %q is reserved by Paimon", f.Name)
		}
		if _, err := ParseDataType(f.Type.String()); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		f.ID = i
		if contains(s.PrimaryKeys, f.Name) {
			f.Type.Nullable = false
		}
		out.Fields = append(out.Fields, f)
	}
	for _, k := range s.PartitionKeys {
		if !contains(s.PrimaryKeys, k) {
			return nil, fmt.Errorf("partition key %q must be part of the primary key", k)
		}
	}
	setDefault(out.Options, OptionFileFormat, "parquet")
	setDefault(out.Options, OptionFileCompression, "zstd")
	setDefault(out.Options, OptionDeletionVectors, "true")
	setDefault(out.Options, OptionMergeEngine, "deduplicate")
	if err := checkSchemaNames("new schema", out); err != nil {
		return nil, err
	}
	if err := checkProfile(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkProfile verifies that a table is one this package reads and writes:
// a primary key, a fixed bucket count >= 1, parquet, deduplicate.
func checkProfile(s *Schema) error {
	if len(s.PrimaryKeys) == 0 {
		return fmt.Errorf("schema %d: no primary key; only primary-key tables are supported", s.ID)
	}
	if len(s.TrimmedPrimaryKeys()) == 0 {
		return fmt.Errorf("schema %d: the primary key has no field outside the partition keys", s.ID)
	}
	if _, err := s.Buckets(); err != nil {
		return err
	}
	for _, k := range s.BucketKeys() {
		if s.FieldIndex(k) < 0 {
			return fmt.Errorf("schema %d: bucket key %q is not a field", s.ID, k)
		}
	}
	// Schema v3 tables without the option use Paimon's default, parquet.
	if f := s.Options[OptionFileFormat]; f != "parquet" && f != "" {
		return fmt.Errorf("schema %d: %s=%q; only parquet is supported", s.ID, OptionFileFormat, f)
	}
	if m, ok := s.Options[OptionMergeEngine]; ok && m != "deduplicate" {
		return fmt.Errorf("schema %d: %s=%q; only deduplicate is supported", s.ID, OptionMergeEngine, m)
	}
	return nil
}
