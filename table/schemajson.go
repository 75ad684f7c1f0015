package table

import (
	"encoding/json"
	"fmt"
	"sort"
)

// schemaJSONVersion is the schema file format version Paimon >= 0.9 writes.
const schemaJSONVersion = 3

// Versions of older schema files whose missing options have other defaults.
const (
	schemaVersionPaimon07 = 1 // no bucket option means bucket=1
	schemaVersionPaimon08 = 2 // no file.format option means orc
)

// EncodeSchema renders s as a version-3 schema file in Paimon's key order and
// Jackson's layout. Options are written in key order so the bytes are a
// function of the schema alone.
func EncodeSchema(s *Schema) []byte {
	fields := make(jsonArray, len(s.Fields))
	for i, f := range s.Fields {
		fields[i] = jsonObject{
			{"id", int64(f.ID)},
			{"name", f.Name},
			{"type", f.Type.String()},
		}
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	options := make(jsonObject, len(keys))
	for i, k := range keys {
		options[i] = jsonField{k, s.Options[k]}
	}
	return renderJackson(jsonObject{
		{"version", int64(schemaJSONVersion)},
		{"id", s.ID},
		{"fields", fields},
		{"highestFieldId", int64(s.HighestFieldID)},
		{"partitionKeys", stringsToJSON(s.PartitionKeys)},
		{"primaryKeys", stringsToJSON(s.PrimaryKeys)},
		{"options", options},
		{"timeMillis", s.TimeMillis},
	})
}

func stringsToJSON(xs []string) jsonArray {
	out := make(jsonArray, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// DecodeSchema parses a schema file of any version Paimon has written,
// filling the option defaults of old versions the way Paimon does. file names
// the source in errors. Nested types (ROW, ARRAY, MAP, ...) are rejected.
func DecodeSchema(file string, data []byte) (*Schema, error) {
	o, err := parseJSONObject(file, data)
	if err != nil {
		return nil, err
	}
	version := int64(schemaVersionPaimon07)
	if o.present("version") {
		if version, err = o.int("version"); err != nil {
			return nil, err
		}
	}
	s := &Schema{}
	if s.ID, err = o.requireInt("id"); err != nil {
		return nil, err
	}
	rawFields, err := o.array("fields")
	if err != nil {
		return nil, err
	}
	for i, raw := range rawFields {
		f, err := decodeSchemaField(file, i, raw)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	highest, err := o.requireInt("highestFieldId")
	if err != nil {
		return nil, err
	}
	s.HighestFieldID = int(highest)
	if s.PartitionKeys, err = o.stringArray("partitionKeys"); err != nil {
		return nil, err
	}
	if s.PrimaryKeys, err = o.stringArray("primaryKeys"); err != nil {
		return nil, err
	}
	if !o.present("options") {
		return nil, o.errorf("options", "missing")
	}
	if s.Options, err = o.stringMap("options"); err != nil {
		return nil, err
	}
	if version <= schemaVersionPaimon07 {
		setDefault(s.Options, OptionBucket, "1")
	}
	if version <= schemaVersionPaimon08 {
		setDefault(s.Options, OptionFileFormat, "orc")
	}
	if o.present("timeMillis") {
		if s.TimeMillis, err = o.int("timeMillis"); err != nil {
			return nil, err
		}
	}
	if err := checkSchemaNames(file, s); err != nil {
		return nil, err
	}
	return s, nil
}

func setDefault(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

func decodeSchemaField(file string, i int, raw json.RawMessage) (Field, error) {
	o, err := parseJSONObject(fmt.Sprintf("%s: fields[%d]", file, i), raw)
	if err != nil {
		return Field{}, err
	}
	id, err := o.requireInt("id")
	if err != nil {
		return Field{}, err
	}
	name, err := o.requireString("name")
	if err != nil {
		return Field{}, err
	}
	if !o.present("type") {
		return Field{}, o.errorf("type", "missing")
	}
	spelling, err := o.str("type")
	if err != nil {
		return Field{}, o.errorf("type", "nested types are not supported")
	}
	t, err := ParseDataType(spelling)
	if err != nil {
		return Field{}, o.errorf("type", "%v", err)
	}
	return Field{ID: int(id), Name: name, Type: t}, nil
}

// checkSchemaNames verifies that every key names a field.
func checkSchemaNames(file string, s *Schema) error {
	for _, k := range s.PartitionKeys {
		if s.FieldIndex(k) < 0 {
			return fmt.Errorf("%s: partition key %q is not a field", file, k)
		}
	}
	for _, k := range s.PrimaryKeys {
		if s.FieldIndex(k) < 0 {
			return fmt.Errorf("%s: primary key %q is not a field", file, k)
		}
	}
	return nil
}
