package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/barrier/blobdir"
)

func init() {
	register(&command{
		path:  "inspect checkpoint",
		usage: "DIR [--json]",
		summary: "list the checkpoints and savepoints of a checkpoint directory: per subtask its files " +
			"(uploaded by the checkpoint or referenced from an earlier one), sizes, shared-file reference counts and orphan blobs",
		run: runInspectCheckpoint,
	})
}

// checkpointReport is what inspect checkpoint prints.
type checkpointReport struct {
	Checkpoints []checkpointEntry `json:"checkpoints"`
	// Orphans are blobs no checkpoint or savepoint references.
	Orphans    []string `json:"orphans"`
	Unreadable []string `json:"unreadable,omitempty"`
}

type checkpointEntry struct {
	ID       barrier.CheckpointID `json:"id"`
	Kind     barrier.Kind         `json:"kind"`
	Metadata string               `json:"metadata"`
	Subtasks []subtaskEntry       `json:"subtasks"`
}

type subtaskEntry struct {
	Operator      string      `json:"operator"`
	Index         int         `json:"index"`
	KeyGroups     string      `json:"key_groups"`
	Backend       string      `json:"backend"`
	BackendID     string      `json:"backend_id"`
	UploadedFiles int         `json:"uploaded_files"`
	UploadedBytes int64       `json:"uploaded_bytes"`
	ReferencedN   int         `json:"referenced_files"`
	ReferencedB   int64       `json:"referenced_bytes"`
	Files         []fileEntry `json:"files"`
}

type fileEntry struct {
	Table    string `json:"table"`
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Blob     string `json:"blob"`
	Uploaded bool   `json:"uploaded"`
	// Refs is how many retained checkpoints reference the file's blob.
	Refs int `json:"refs"`
}

func runInspectCheckpoint(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("inspect checkpoint", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one checkpoint directory, got %d arguments", len(pos))
	}
	store, err := blobdir.Open(pos[0])
	if err != nil {
		return err
	}
	rep, err := inspectCheckpoints(context.Background(), store)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printCheckpointReport(stdout, rep)
}

// inspectCheckpoints reads every metadata blob of a store and counts, per
// shared file, the checkpoints referencing it, as the coordinator's registry
// would after recovering.
func inspectCheckpoints(ctx context.Context, store barrier.BlobStore) (*checkpointReport, error) {
	listing, err := store.List(ctx, "")
	if err != nil {
		return nil, err
	}
	rep := &checkpointReport{Orphans: []string{}}
	var metas []*barrier.Metadata
	names := map[barrier.CheckpointID]string{}
	for _, b := range listing {
		if _, _, ok := barrier.ParseMetadataBlobName(b.Name); !ok {
			continue
		}
		m, err := barrier.ReadMetadata(ctx, store, b.Name)
		if err != nil {
			rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %v", b.Name, err))
			continue
		}
		metas = append(metas, m)
		names[m.ID] = b.Name
	}
	slices.SortFunc(metas, func(a, b *barrier.Metadata) int { return cmp.Compare(a.ID, b.ID) })
	ledger, err := barrier.NewLedger(len(metas) + 1)
	if err != nil {
		return nil, err
	}
	refs := map[string]int{}
	for _, m := range metas {
		if _, err := ledger.Restore(m, names[m.ID], false); err != nil {
			rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %v", names[m.ID], err))
			continue
		}
		for i := range m.Operators {
			for j := range m.Operators[i].Subtasks {
				m.Operators[i].Subtasks[j].Files(func(_ barrier.FileKey, f barrier.FileRef) { refs[f.Blob]++ })
			}
		}
	}
	live := map[string]bool{}
	for _, b := range ledger.LiveBlobs() {
		live[b] = true
	}
	for _, b := range listing {
		if !live[b.Name] {
			rep.Orphans = append(rep.Orphans, b.Name)
		}
	}
	for _, m := range metas {
		e := checkpointEntry{ID: m.ID, Kind: m.Kind, Metadata: names[m.ID]}
		for _, op := range m.Operators {
			for _, s := range op.Subtasks {
				se := subtaskEntry{Operator: op.ID, Index: s.Index, KeyGroups: s.KeyGroups.String(), Backend: s.Backend, BackendID: s.BackendID, Files: []fileEntry{}}
				for _, t := range s.Tables {
					for _, f := range t.Files {
						se.Files = append(se.Files, fileEntry{Table: t.Name, Path: f.Path, Size: f.Size, Blob: f.Blob, Uploaded: f.Uploaded, Refs: refs[f.Blob]})
						if f.Uploaded {
							se.UploadedFiles++
							se.UploadedBytes += f.Size
						} else {
							se.ReferencedN++
							se.ReferencedB += f.Size
						}
					}
				}
				e.Subtasks = append(e.Subtasks, se)
			}
		}
		rep.Checkpoints = append(rep.Checkpoints, e)
	}
	return rep, nil
}

func printCheckpointReport(w io.Writer, rep *checkpointReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range rep.Checkpoints {
		fmt.Fprintf(tw, "%s %d\t%s\n", c.Kind, c.ID, c.Metadata)
		for _, s := range c.Subtasks {
			fmt.Fprintf(tw, "  %s[%d] %s\t%s %s\tuploaded %d files %d bytes\treferenced %d files %d bytes\n",
				s.Operator, s.Index, s.KeyGroups, s.Backend, s.BackendID, s.UploadedFiles, s.UploadedBytes, s.ReferencedN, s.ReferencedB)
			for _, f := range s.Files {
				how := "referenced"
				if f.Uploaded {
					how = "uploaded"
				}
				fmt.Fprintf(tw, "    %s/%s\t%d bytes\t%s\trefs %d\t%s\n", f.Table, f.Path, f.Size, how, f.Refs, f.Blob)
			}
		}
	}
	for _, o := range rep.Orphans {
		fmt.Fprintf(tw, "orphan\t%s\n", o)
	}
	for _, u := range rep.Unreadable {
		fmt.Fprintf(tw, "unreadable\t%s\n", u)
	}
	return tw.Flush()
}
