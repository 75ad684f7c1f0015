package table

import (
	"fmt"
	"sort"
	"strconv"
)

// CommitKind is the kind of change a snapshot records.
type CommitKind string

const (
	CommitAppend    CommitKind = "APPEND"
	CommitCompact   CommitKind = "COMPACT"
	CommitOverwrite CommitKind = "OVERWRITE"
	CommitAnalyze   CommitKind = "ANALYZE"
)

// snapshotJSONVersion is the snapshot file format version of every Paimon
// release since 0.8.
const snapshotJSONVersion = 3

// Snapshot is one snapshot/snapshot-N file. Optional fields are pointers (or
// empty strings and nil maps) so a file Paimon wrote re-encodes to the same
// bytes; the unexported flags remember keys Paimon 1.x writes even when
// they carry no value.
type Snapshot struct {
	Version                   int
	ID                        int64
	SchemaID                  int64
	BaseManifestList          string
	BaseManifestListSize      *int64
	DeltaManifestList         string
	DeltaManifestListSize     *int64
	ChangelogManifestList     *string
	ChangelogManifestListSize *int64
	IndexManifest             string // "" when the table has no index files
	CommitUser                string
	CommitIdentifier          int64
	CommitKind                CommitKind
	TimeMillis                int64
	LogOffsets                map[int32]int64
	TotalRecordCount          int64
	DeltaRecordCount          int64
	ChangelogRecordCount      *int64
	Watermark                 *int64
	Statistics                *string
	Properties                map[string]string
	NextRowID                 *int64

	// hasChangelogManifestListKey: the file has "changelogManifestList"
	// (Paimon 1.x writes it as null). hasLogOffsets: it has "logOffsets".
	hasChangelogManifestListKey bool
	hasLogOffsets               bool
}

// newSnapshot returns a snapshot with the keys Paimon 1.x always writes.
func newSnapshot() *Snapshot {
	return &Snapshot{
		Version:                     snapshotJSONVersion,
		hasChangelogManifestListKey: true,
		hasLogOffsets:               true,
	}
}

// EncodeSnapshot renders s in Paimon's key order and Jackson's layout.
func EncodeSnapshot(s *Snapshot) []byte {
	o := jsonObject{
		{"version", int64(s.Version)},
		{"id", s.ID},
		{"schemaId", s.SchemaID},
		{"baseManifestList", s.BaseManifestList},
	}
	o = appendOptInt(o, "baseManifestListSize", s.BaseManifestListSize)
	o = append(o, jsonField{"deltaManifestList", s.DeltaManifestList})
	o = appendOptInt(o, "deltaManifestListSize", s.DeltaManifestListSize)
	if s.ChangelogManifestList != nil {
		o = append(o, jsonField{"changelogManifestList", *s.ChangelogManifestList})
	} else if s.hasChangelogManifestListKey {
		o = append(o, jsonField{"changelogManifestList", nil})
	}
	o = appendOptInt(o, "changelogManifestListSize", s.ChangelogManifestListSize)
	if s.IndexManifest != "" {
		o = append(o, jsonField{"indexManifest", s.IndexManifest})
	}
	o = append(o,
		jsonField{"commitUser", s.CommitUser},
		jsonField{"commitIdentifier", s.CommitIdentifier},
		jsonField{"commitKind", string(s.CommitKind)},
		jsonField{"timeMillis", s.TimeMillis},
	)
	if s.LogOffsets != nil || s.hasLogOffsets {
		o = append(o, jsonField{"logOffsets", logOffsetsJSON(s.LogOffsets)})
	}
	o = append(o,
		jsonField{"totalRecordCount", s.TotalRecordCount},
		jsonField{"deltaRecordCount", s.DeltaRecordCount},
	)
	o = appendOptInt(o, "changelogRecordCount", s.ChangelogRecordCount)
	o = appendOptInt(o, "watermark", s.Watermark)
	if s.Statistics != nil {
		o = append(o, jsonField{"statistics", *s.Statistics})
	}
	if s.Properties != nil {
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		props := make(jsonObject, len(keys))
		for i, k := range keys {
			props[i] = jsonField{k, s.Properties[k]}
		}
		o = append(o, jsonField{"properties", props})
	}
	o = appendOptInt(o, "nextRowId", s.NextRowID)
	return renderJackson(o)
}

func appendOptInt(o jsonObject, key string, v *int64) jsonObject {
	if v == nil {
		return o
	}
	return append(o, jsonField{key, *v})
}

func logOffsetsJSON(m map[int32]int64) jsonObject {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	o := make(jsonObject, len(keys))
	for i, k := range keys {
		o[i] = jsonField{strconv.Itoa(k), m[int32(k)]}
	}
	return o
}

// DecodeSnapshot parses a snapshot file. Unknown keys are ignored, as
// Paimon's reader does. file names the source in errors.
func DecodeSnapshot(file string, data []byte) (*Snapshot, error) {
	o, err := parseJSONObject(file, data)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{}
	version, err := o.requireInt("version")
	if err != nil {
		return nil, err
	}
	s.Version = int(version)
	if s.ID, err = o.requireInt("id"); err != nil {
		return nil, err
	}
	if s.SchemaID, err = o.requireInt("schemaId"); err != nil {
		return nil, err
	}
	if s.BaseManifestList, err = o.requireString("baseManifestList"); err != nil {
		return nil, err
	}
	if s.DeltaManifestList, err = o.requireString("deltaManifestList"); err != nil {
		return nil, err
	}
	if s.CommitUser, err = o.requireString("commitUser"); err != nil {
		return nil, err
	}
	if s.CommitIdentifier, err = o.requireInt("commitIdentifier"); err != nil {
		return nil, err
	}
	kind, err := o.requireString("commitKind")
	if err != nil {
		return nil, err
	}
	s.CommitKind = CommitKind(kind)
	switch s.CommitKind {
	case CommitAppend, CommitCompact, CommitOverwrite, CommitAnalyze:
	default:
		return nil, o.errorf("commitKind", "unknown kind %q", kind)
	}
	if s.TimeMillis, err = o.requireInt("timeMillis"); err != nil {
		return nil, err
	}
	// The record counts are nullable in Paimon <= 1.x; a missing one counts as 0.
	for _, f := range []struct {
		key string
		dst *int64
	}{{"totalRecordCount", &s.TotalRecordCount}, {"deltaRecordCount", &s.DeltaRecordCount}} {
		if o.present(f.key) {
			if *f.dst, err = o.int(f.key); err != nil {
				return nil, err
			}
		}
	}
	ints := []struct {
		key string
		dst **int64
	}{
		{"baseManifestListSize", &s.BaseManifestListSize},
		{"deltaManifestListSize", &s.DeltaManifestListSize},
		{"changelogManifestListSize", &s.ChangelogManifestListSize},
		{"changelogRecordCount", &s.ChangelogRecordCount},
		{"watermark", &s.Watermark},
		{"nextRowId", &s.NextRowID},
	}
	for _, f := range ints {
		if *f.dst, err = o.optInt(f.key); err != nil {
			return nil, err
		}
	}
	if s.ChangelogManifestList, err = o.optString("changelogManifestList"); err != nil {
		return nil, err
	}
	_, s.hasChangelogManifestListKey = o.m["changelogManifestList"]
	index, err := o.optString("indexManifest")
	if err != nil {
		return nil, err
	}
	if index != nil {
		if *index == "" {
			return nil, o.errorf("indexManifest", "empty file name")
		}
		s.IndexManifest = *index
	}
	if s.Statistics, err = o.optString("statistics"); err != nil {
		return nil, err
	}
	if o.present("properties") {
		if s.Properties, err = o.stringMap("properties"); err != nil {
			return nil, err
		}
	}
	if o.present("logOffsets") {
		s.hasLogOffsets = true
		if s.LogOffsets, err = decodeLogOffsets(o); err != nil {
			return nil, err
		}
	}
	if s.ID < 1 {
		return nil, o.errorf("id", "snapshot id %d is below 1", s.ID)
	}
	return s, nil
}

func decodeLogOffsets(o jsonFields) (map[int32]int64, error) {
	raw, err := o.stringMap("logOffsets")
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64, len(raw))
	for k, v := range raw {
		bucket, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return nil, o.errorf("logOffsets", "bucket %q is not an int", k)
		}
		off, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, o.errorf("logOffsets", "offset %q is not a long", v)
		}
		out[int32(bucket)] = off
	}
	return out, nil
}

// String identifies the snapshot in messages.
func (s *Snapshot) String() string {
	return fmt.Sprintf("snapshot %d (%s, user %s, identifier %d)", s.ID, s.CommitKind, s.CommitUser, s.CommitIdentifier)
}
