package table

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// fileIdentity is what makes two manifest entries name the same file:
// partition, bucket, level, file name, extra files, embedded index and
// external path (Paimon's FileEntry.Identifier). A level change is a DELETE
// at the old level plus an ADD of the same name at the new one.
type fileIdentity struct {
	partition   string
	bucket      int32
	level       int32
	name        string
	extra       string // extra file names joined by NUL
	embedded    string
	hasEmbedded bool
	external    string
	hasExternal bool
}

func identityOf(e *ManifestEntry) fileIdentity {
	id := fileIdentity{
		partition:   string(e.Partition),
		bucket:      e.Bucket,
		level:       e.File.Level,
		name:        e.File.FileName,
		extra:       strings.Join(e.File.ExtraFiles, "\x00"),
		embedded:    string(e.File.EmbeddedIndex),
		hasEmbedded: e.File.EmbeddedIndex != nil,
	}
	if e.File.ExternalPath != nil {
		id.external, id.hasExternal = *e.File.ExternalPath, true
	}
	return id
}

// entryFold folds manifest entries in order with Paimon's rules: an ADD of
// a file already present is an error; a DELETE cancels an earlier ADD of the
// same identity, and is kept when there is none (its ADD lives in a manifest
// outside the fold).
type entryFold struct {
	m map[fileIdentity]ManifestEntry
}

func newEntryFold() *entryFold { return &entryFold{m: make(map[fileIdentity]ManifestEntry)} }

func (f *entryFold) apply(e ManifestEntry) error {
	id := identityOf(&e)
	prev, ok := f.m[id]
	switch e.Kind {
	case FileAdd:
		if ok {
			return fmt.Errorf("file %s (bucket %d, level %d) is added twice", e.File.FileName, e.Bucket, e.File.Level)
		}
		f.m[id] = e
	case FileDelete:
		if ok && prev.Kind == FileAdd {
			delete(f.m, id)
		} else if !ok {
			f.m[id] = e
		} else {
			return fmt.Errorf("file %s (bucket %d, level %d) is deleted twice", e.File.FileName, e.Bucket, e.File.Level)
		}
	default:
		return fmt.Errorf("file %s: unknown kind %d", e.File.FileName, e.Kind)
	}
	return nil
}

func (f *entryFold) applyAll(entries []ManifestEntry) error {
	for _, e := range entries {
		if err := f.apply(e); err != nil {
			return err
		}
	}
	return nil
}

// entries returns the folded entries of one kind in entryOrder.
func (f *entryFold) entries(kind FileKind) []ManifestEntry {
	var out []ManifestEntry
	for _, e := range f.m {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, entryOrder)
	return out
}

// entryOrder sorts entries by partition, bucket, level and file name so
// listings and merged manifests do not depend on map iteration.
func entryOrder(a, b ManifestEntry) int {
	if c := bytes.Compare(a.Partition, b.Partition); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Bucket, b.Bucket); c != 0 {
		return c
	}
	if c := cmp.Compare(a.File.Level, b.File.Level); c != 0 {
		return c
	}
	if c := strings.Compare(a.File.FileName, b.File.FileName); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}
