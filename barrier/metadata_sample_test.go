package barrier

import (
	"fmt"

	"github.com/lakestate/lakestate/keygroup"
)

// sampleMetadata is checkpoint 3 of a job with a keyed operator of
// parallelism 2 (one table per subtask, files uploaded now and earlier) and
// a stateless source whose offsets ride in extras.
func sampleMetadata() *Metadata {
	keyed := OperatorState{ID: "agg", Name: "group aggregate", Parallelism: 2, MaxParallelism: 128}
	for i := range 2 {
		b := fmt.Sprintf("backend-%d", i)
		keyed.Subtasks = append(keyed.Subtasks, SubtaskState{
			Index:     i,
			KeyGroups: keygroup.RangeForSubtask(128, 2, i),
			Backend:   "paimon",
			BackendID: b,
			Tables: []TableState{{Name: "values", SnapshotID: 4, Files: []FileRef{
				{Path: "bucket-0/data-1.parquet", Size: 1000, Blob: "shared/chk-1/" + b + "/values/bucket-0/data-1.parquet"},
				{Path: "manifest/manifest-2", Size: 300, Blob: "shared/chk-3/" + b + "/values/manifest/manifest-2", Uploaded: true},
				{Path: "snapshot/snapshot-4", Size: 900, Blob: "shared/chk-3/" + b + "/values/snapshot/snapshot-4", Uploaded: true},
			}}},
			Extras: map[string]Extra{"watermark": {{0, 0, 0, 42}}},
		})
	}
	source := OperatorState{ID: "source", Parallelism: 1, MaxParallelism: 128, Subtasks: []SubtaskState{{
		KeyGroups: keygroup.RangeForSubtask(128, 1, 0),
		Backend:   "memory",
		Extras:    map[string]Extra{"offsets": {[]byte(`{"partition-0":1234}`)}},
	}}}
	return &Metadata{ID: 3, Kind: KindCheckpoint, TimestampMillis: 1700000000123, JobID: "job-1", Operators: []OperatorState{keyed, source}}
}

// sampleSavepoint is sampleMetadata as savepoint 3: every file its own upload.
func sampleSavepoint() *Metadata {
	m := sampleMetadata()
	m.Kind = KindSavepoint
	for i := range m.Operators {
		for j := range m.Operators[i].Subtasks {
			s := &m.Operators[i].Subtasks[j]
			for k := range s.Tables {
				for f := range s.Tables[k].Files {
					file := &s.Tables[k].Files[f]
					file.Uploaded = true
					file.Blob = "savepoint-3/" + s.BackendID + "/" + s.Tables[k].Name + "/" + file.Path
				}
			}
		}
	}
	return m
}

// sampleWithExtraFiles is sampleMetadata whose first keyed subtask also
// holds two pieces of a sink's extras as extra files: one an earlier
// checkpoint uploaded, one uploaded now.
func sampleWithExtraFiles() *Metadata {
	m := sampleMetadata()
	s := &m.Operators[0].Subtasks[0]
	s.Extras["sink"] = Extra{{2}}
	s.ExtraFiles = []ExtraFile{
		{Owner: "sink", CRC: 0x1234abcd, FileRef: FileRef{Path: "txn-0-2", Size: 4000, Blob: "shared/chk-2/backend-0/_extras/sink/txn-0-2"}},
		{Owner: "sink", CRC: 0x00000001, FileRef: FileRef{Path: "txn-0-3", Size: 5000, Blob: "shared/chk-3/backend-0/_extras/sink/txn-0-3", Uploaded: true}},
	}
	return m
}

// allBlobs lists the blobs m's files name.
func allBlobs(m *Metadata) []string {
	var out []string
	for i := range m.Operators {
		for j := range m.Operators[i].Subtasks {
			m.Operators[i].Subtasks[j].Files(func(_ FileKey, f FileRef) { out = append(out, f.Blob) })
		}
	}
	return out
}
