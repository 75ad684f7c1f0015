package barrier

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The metadata file is a fixed header followed by a JSON body:
//
//	offset  size  field
//	0       8     magic "LKSTCKPT"
//	8       4     format version, big endian (1)
//	12      4     body length in bytes, big endian
//	16      4     CRC-32C (Castagnoli) of the body, big endian
//	20      n     body: the Metadata as JSON
//
// JSON keeps the file inspectable with ordinary tools; the checksum catches
// torn or corrupted files before the JSON decoder sees them.
const (
	metadataMagic   = "LKSTCKPT"
	metadataVersion = 1
	headerSize      = 20
	// maxBodySize bounds what a decoder allocates for a corrupt length.
	maxBodySize = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MetadataError reports a metadata file that cannot be decoded or does not
// describe a valid checkpoint.
type MetadataError struct {
	File    string // the blob name
	Problem string
	Err     error // the underlying cause, if any
}

func (e *MetadataError) Error() string {
	s := "checkpoint metadata " + e.File + ": " + e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *MetadataError) Unwrap() error { return e.Err }

// EncodeMetadata validates m and returns its file content.
func EncodeMetadata(m *Metadata) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encode checkpoint metadata %d: %w", m.ID, err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint metadata %d: %w", m.ID, err)
	}
	if len(body) > maxBodySize {
		return nil, fmt.Errorf("encode checkpoint metadata %d: body of %d bytes exceeds %d", m.ID, len(body), maxBodySize)
	}
	out := make([]byte, headerSize, headerSize+len(body))
	copy(out, metadataMagic)
	binary.BigEndian.PutUint32(out[8:], metadataVersion)
	binary.BigEndian.PutUint32(out[12:], uint32(len(body)))
	binary.BigEndian.PutUint32(out[16:], crc32.Checksum(body, castagnoli))
	return append(out, body...), nil
}

// DecodeMetadata parses and validates the content of the metadata file name.
// Every failure is a *MetadataError naming the file and the problem.
func DecodeMetadata(name string, data []byte) (*Metadata, error) {
	bad := func(problem string, err error) (*Metadata, error) {
		return nil, &MetadataError{File: name, Problem: problem, Err: err}
	}
	if len(data) < headerSize {
		return bad(fmt.Sprintf("truncated: %d bytes, header needs %d", len(data), headerSize), nil)
	}
	if string(data[:8]) != metadataMagic {
		return bad(fmt.Sprintf("bad magic %q", data[:8]), nil)
	}
	if v := binary.BigEndian.Uint32(data[8:]); v != metadataVersion {
		return bad(fmt.Sprintf("unsupported format version %d (this build reads %d)", v, metadataVersion), nil)
	}
	n := binary.BigEndian.Uint32(data[12:])
	if n > maxBodySize {
		return bad(fmt.Sprintf("body length %d exceeds %d", n, maxBodySize), nil)
	}
	body := data[headerSize:]
	if uint64(len(body)) != uint64(n) {
		return bad(fmt.Sprintf("body is %d bytes, header says %d", len(body), n), nil)
	}
	if want, got := binary.BigEndian.Uint32(data[16:]), crc32.Checksum(body, castagnoli); got != want {
		return bad(fmt.Sprintf("checksum mismatch: header %08x, body %08x", want, got), nil)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m Metadata
	if err := dec.Decode(&m); err != nil {
		return bad("malformed body", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("trailing data after the body", nil)
	}
	normalize(&m)
	if err := m.Validate(); err != nil {
		return bad("invalid", err)
	}
	return &m, nil
}

// normalize makes absent and empty extras the same value, so a decoded
// document re-encodes to the same bytes.
func normalize(m *Metadata) {
	for i := range m.Operators {
		for j := range m.Operators[i].Subtasks {
			if s := &m.Operators[i].Subtasks[j]; len(s.Extras) == 0 {
				s.Extras = nil
			}
		}
	}
}
