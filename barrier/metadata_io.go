package barrier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// WriteMetadata encodes m and puts it at MetadataBlobName(m.Kind, m.ID),
// returning the name. BlobStore puts are atomic, so a reader finds the whole
// document or none: the write is the checkpoint's commit point.
func WriteMetadata(ctx context.Context, store BlobStore, m *Metadata) (string, error) {
	parts, err := encodeMetadata(m)
	if err != nil {
		return "", err
	}
	name := MetadataBlobName(m.Kind, m.ID)
	readers := make([]io.Reader, len(parts))
	for i, p := range parts {
		readers[i] = bytes.NewReader(p)
	}
	if err := store.Put(ctx, name, io.MultiReader(readers...)); err != nil {
		return "", err
	}
	return name, nil
}

// ReadMetadata reads and decodes the metadata blob name. Store errors keep
// their BlobError classification; a corrupt document is a *MetadataError.
func ReadMetadata(ctx context.Context, store BlobStore, name string) (*Metadata, error) {
	rc, err := store.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, headerSize+maxBodySize+maxExtrasSize+1))
	if err != nil {
		if _, ok := errors.AsType[*BlobError](err); ok {
			return nil, err
		}
		return nil, TransientError("get", name, err) // a broken read stream, e.g. a dropped connection
	}
	return DecodeMetadata(name, data)
}

// ReadExtras returns owner's extras of subtask st: its inline bytes followed
// by the content of each of its extra files, read from store and checked
// against the size and CRC-32C the metadata gives. Store errors keep their
// BlobError classification; a blob that does not match is an error naming
// it and the problem.
func ReadExtras(ctx context.Context, store BlobStore, st *SubtaskState, owner string) ([]byte, error) {
	inline := st.Extras[owner]
	size := int64(inline.Len())
	for _, f := range st.ExtraFiles {
		if f.Owner == owner {
			size += f.Size
		}
	}
	if size > maxExtrasSize {
		return nil, fmt.Errorf("extras of %q: %d bytes exceed %d", owner, size, maxExtrasSize)
	}
	out := make([]byte, 0, size)
	for _, p := range inline {
		out = append(out, p...)
	}
	for _, f := range st.ExtraFiles {
		if f.Owner != owner {
			continue
		}
		var err error
		if out, err = appendExtraFile(ctx, store, out, f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendExtraFile appends the content of extra file f to out.
func appendExtraFile(ctx context.Context, store BlobStore, out []byte, f ExtraFile) ([]byte, error) {
	rc, err := store.Get(ctx, f.Blob)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	start := len(out)
	out = slices.Grow(out, int(f.Size))[:start+int(f.Size)]
	n, err := io.ReadFull(rc, out[start:])
	if err == nil {
		var one [1]byte
		if _, err = io.ReadFull(rc, one[:]); err == nil {
			err = errLonger
		} else if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	switch {
	case errors.Is(err, errLonger):
		return nil, &ExtraFileError{Blob: f.Blob, Problem: fmt.Sprintf("longer than the %d bytes the metadata says", f.Size)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return nil, &ExtraFileError{Blob: f.Blob, Problem: fmt.Sprintf("%d bytes, the metadata says %d", n, f.Size)}
	case err != nil:
		if _, ok := errors.AsType[*BlobError](err); ok {
			return nil, err
		}
		return nil, TransientError("get", f.Blob, err)
	}
	if crc := crc32.Checksum(out[start:], castagnoli); crc != f.CRC {
		return nil, &ExtraFileError{Blob: f.Blob, Problem: fmt.Sprintf("checksum mismatch: metadata %08x, content %08x", f.CRC, crc)}
	}
	return out, nil
}

var errLonger = errors.New("longer than expected")

// ExtraFileError reports an extra file whose blob does not hold what the
// metadata says.
type ExtraFileError struct {
	Blob    string
	Problem string
}

func (e *ExtraFileError) Error() string { return "checkpoint extra file " + e.Blob + ": " + e.Problem }
