package barrier

// FileKey identifies a shared file across checkpoints: the same key in two
// checkpoints means the same immutable file, so the later one may reference
// the earlier upload instead of uploading again.
type FileKey struct {
	Backend string // the subtask's BackendID
	Table   string
	Path    string // relative to the table directory
}

func (k FileKey) String() string { return k.Backend + "/" + k.Table + "/" + k.Path }

// SharedRef is one file of a checkpoint as the registry sees it.
type SharedRef struct {
	Key  FileKey
	Size int64
	// Blob is the upload holding the file. For a placeholder the registry
	// ignores it and resolves the key to the blob it registered.
	Blob string
	// Placeholder marks a reference to a file an earlier checkpoint uploaded.
	Placeholder bool
}

// subtaskRefs lists the subtask's files as registry references, in table and
// file order.
func subtaskRefs(s *SubtaskState) []SharedRef {
	var refs []SharedRef
	s.Files(func(k FileKey, f FileRef) {
		refs = append(refs, SharedRef{Key: k, Size: f.Size, Blob: f.Blob, Placeholder: !f.Uploaded})
	})
	return refs
}

// withResolved returns a copy of s whose files name the blobs the registry
// resolved, in the order subtaskRefs listed them.
func withResolved(s SubtaskState, resolved []SharedRef) SubtaskState {
	tables := make([]TableState, len(s.Tables))
	i := 0
	for ti, t := range s.Tables {
		files := make([]FileRef, len(t.Files))
		for fi, f := range t.Files {
			r := resolved[i]
			i++
			f.Blob, f.Uploaded = r.Blob, !r.Placeholder
			files[fi] = f
		}
		t.Files = files
		tables[ti] = t
	}
	s.Tables = tables
	if len(s.ExtraFiles) > 0 {
		extras := make([]ExtraFile, len(s.ExtraFiles))
		for fi, f := range s.ExtraFiles {
			r := resolved[i]
			i++
			f.Blob, f.Uploaded = r.Blob, !r.Placeholder
			extras[fi] = f
		}
		s.ExtraFiles = extras
	}
	return s
}

// uploads lists the blobs a subtask state says it uploaded.
func uploads(s *SubtaskState) []string {
	var out []string
	s.Files(func(_ FileKey, f FileRef) {
		if f.Uploaded && ValidBlobName(f.Blob) == nil {
			out = append(out, f.Blob)
		}
	})
	return out
}
