package barrier

import (
	"bytes"
	"context"
	"errors"
	"io"
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
