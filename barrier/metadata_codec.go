package barrier

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
)

// The metadata file is a fixed header, a JSON body and a binary section
// with the subtasks' extras:
//
//	offset  size  field
//	0       8     magic "LKSTCKPT"
//	8       4     format version, big endian (3)
//	12      4     body length n in bytes, big endian
//	16      4     extras section length x in bytes, big endian
//	20      4     CRC-32C (Castagnoli) of the body followed by the extras section, big endian
//	24      n     body: the Metadata as JSON, each subtask's extras as
//	              {"owner": {"offset": o, "size": s}}, a range of the section,
//	              and its extra files as "extra_files": [{"owner", "path",
//	              "size", "blob", "uploaded", "crc32c"}], pieces of the
//	              extras kept in blobs of their own
//	24+n    x     extras section: the extras' bytes, back to back
//
// JSON keeps the file inspectable with ordinary tools; the extras (a sink's
// pending transactions can be megabytes per checkpoint) stay out of it,
// where base64 and the JSON encoder cost more than the rest of the file.
// Since version 3 a sink's transactions are extra files: each is put once,
// as its own blob, and every checkpoint that holds it only names it, so a
// metadata file no longer grows with the transactions not yet committed.
// The checksum catches torn or corrupted files before the JSON decoder sees
// them. Version 2 files (the same layout without extra files) and version 1
// files (a 20-byte header: magic, version, body length, CRC-32C of the
// body; extras inline in the JSON as base64) still decode.
const (
	metadataMagic   = "LKSTCKPT"
	metadataVersion = 3
	headerSize      = 24
	headerSizeV1    = 20
	// maxBodySize bounds what a decoder allocates for a corrupt length.
	maxBodySize = 256 << 20
	// maxExtrasSize bounds the extras section.
	maxExtrasSize = 1 << 31
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
	parts, err := encodeMetadata(m)
	if err != nil {
		return nil, err
	}
	return bytes.Join(parts, nil), nil
}

// encodeMetadata validates m and returns its file content in parts (the
// header, the body, then every part of every extra): a writer streams
// them, so the extras are not copied into one buffer.
func encodeMetadata(m *Metadata) ([][]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encode checkpoint metadata %d: %w", m.ID, err)
	}
	doc := metadataDoc{Metadata: m, Operators: make([]operatorDoc, len(m.Operators))}
	var extras [][]byte
	var extrasSize int64
	for i := range m.Operators {
		op := &m.Operators[i]
		doc.Operators[i] = operatorDoc{OperatorState: op, Subtasks: make([]subtaskDoc, len(op.Subtasks))}
		for j := range op.Subtasks {
			st := &op.Subtasks[j]
			sd := subtaskDoc{SubtaskState: st}
			if len(st.Extras) > 0 {
				sd.Extras = make(map[string]extraRef, len(st.Extras))
				for _, owner := range slices.Sorted(maps.Keys(st.Extras)) {
					e := st.Extras[owner]
					size := int64(e.Len())
					sd.Extras[owner] = extraRef{Offset: extrasSize, Size: size}
					extras = append(extras, e...)
					extrasSize += size
				}
			}
			doc.Operators[i].Subtasks[j] = sd
		}
	}
	body, err := json.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint metadata %d: %w", m.ID, err)
	}
	if len(body) > maxBodySize {
		return nil, fmt.Errorf("encode checkpoint metadata %d: body of %d bytes exceeds %d", m.ID, len(body), maxBodySize)
	}
	if extrasSize > maxExtrasSize {
		return nil, fmt.Errorf("encode checkpoint metadata %d: extras of %d bytes exceed %d", m.ID, extrasSize, maxExtrasSize)
	}
	crc := crc32.Checksum(body, castagnoli)
	for _, b := range extras {
		crc = crc32.Update(crc, castagnoli, b)
	}
	header := make([]byte, headerSize)
	copy(header, metadataMagic)
	binary.BigEndian.PutUint32(header[8:], metadataVersion)
	binary.BigEndian.PutUint32(header[12:], uint32(len(body)))
	binary.BigEndian.PutUint32(header[16:], uint32(extrasSize))
	binary.BigEndian.PutUint32(header[20:], crc)
	return append([][]byte{header, body}, extras...), nil
}

// metadataDoc is the JSON body of a version 2 or 3 file: the Metadata with each
// subtask's extras replaced by ranges of the extras section. (The outer
// Extras field hides the embedded one of the same JSON name.)
type metadataDoc struct {
	*Metadata
	Operators []operatorDoc `json:"operators"`
}

type operatorDoc struct {
	*OperatorState
	Subtasks []subtaskDoc `json:"subtasks"`
}

type subtaskDoc struct {
	*SubtaskState
	Extras map[string]extraRef `json:"extras,omitempty"`
}

// extraRef is where one extra lies in the extras section.
type extraRef struct {
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
}

// DecodeMetadata parses and validates the content of the metadata file name.
// Every failure is a *MetadataError naming the file and the problem. The
// extras of the result share data's memory.
func DecodeMetadata(name string, data []byte) (*Metadata, error) {
	bad := func(problem string, err error) (*Metadata, error) {
		return nil, &MetadataError{File: name, Problem: problem, Err: err}
	}
	if len(data) < headerSizeV1 {
		return bad(fmt.Sprintf("truncated: %d bytes, header needs %d", len(data), headerSizeV1), nil)
	}
	if string(data[:8]) != metadataMagic {
		return bad(fmt.Sprintf("bad magic %q", data[:8]), nil)
	}
	v := binary.BigEndian.Uint32(data[8:])
	switch v {
	case 1:
		return decodeMetadataV1(name, data, bad)
	case 2, metadataVersion:
	default:
		return bad(fmt.Sprintf("unsupported format version %d (this build reads 1 to %d)", v, metadataVersion), nil)
	}
	if len(data) < headerSize {
		return bad(fmt.Sprintf("truncated: %d bytes, header needs %d", len(data), headerSize), nil)
	}
	n, x := binary.BigEndian.Uint32(data[12:]), binary.BigEndian.Uint32(data[16:])
	if n > maxBodySize {
		return bad(fmt.Sprintf("body length %d exceeds %d", n, maxBodySize), nil)
	}
	if x > maxExtrasSize {
		return bad(fmt.Sprintf("extras section length %d exceeds %d", x, maxExtrasSize), nil)
	}
	if rest := uint64(len(data) - headerSize); rest != uint64(n)+uint64(x) {
		return bad(fmt.Sprintf("%d bytes after the header, header says body %d and extras %d", rest, n, x), nil)
	}
	if want, got := binary.BigEndian.Uint32(data[20:]), crc32.Checksum(data[headerSize:], castagnoli); got != want {
		return bad(fmt.Sprintf("checksum mismatch: header %08x, content %08x", want, got), nil)
	}
	body, extras := data[headerSize:headerSize+n], data[headerSize+n:]
	var doc metadataDoc
	if problem, err := decodeJSON(body, &doc); problem != "" {
		return bad(problem, err)
	}
	m := doc.Metadata
	if m == nil {
		m = &Metadata{} // an empty object or null: Validate names what is missing
	}
	m.Operators = make([]OperatorState, len(doc.Operators))
	for i, od := range doc.Operators {
		if od.OperatorState != nil {
			m.Operators[i] = *od.OperatorState
		}
		m.Operators[i].Subtasks = make([]SubtaskState, len(od.Subtasks))
		if od.Subtasks == nil {
			m.Operators[i].Subtasks = nil
		}
		for j, sd := range od.Subtasks {
			st := &m.Operators[i].Subtasks[j]
			if sd.SubtaskState != nil {
				*st = *sd.SubtaskState
			}
			if v < 3 && st.ExtraFiles != nil {
				return bad(fmt.Sprintf("operator %q subtask %d: extra files in a version %d file", m.Operators[i].ID, j, v), nil)
			}
			if len(st.ExtraFiles) == 0 {
				st.ExtraFiles = nil // absent and empty alike, so re-encoding is stable
			}
			st.Extras = nil
			for owner, r := range sd.Extras {
				if r.Offset < 0 || r.Size < 0 || uint64(r.Offset)+uint64(r.Size) > uint64(len(extras)) {
					return bad(fmt.Sprintf("operator %q subtask %d: extra %q at [%d,+%d) outside the %d-byte extras section", m.Operators[i].ID, j, owner, r.Offset, r.Size, len(extras)), nil)
				}
				if st.Extras == nil {
					st.Extras = make(map[string]Extra, len(sd.Extras))
				}
				end := r.Offset + r.Size
				st.Extras[owner] = Extra{extras[r.Offset:end:end]}
			}
		}
	}
	if doc.Operators == nil {
		m.Operators = nil
	}
	if err := m.Validate(); err != nil {
		return bad("invalid", err)
	}
	return m, nil
}

// decodeMetadataV1 decodes a version 1 file: a 20-byte header and the whole
// Metadata, extras included, as JSON.
func decodeMetadataV1(name string, data []byte, bad func(string, error) (*Metadata, error)) (*Metadata, error) {
	n := binary.BigEndian.Uint32(data[12:])
	if n > maxBodySize {
		return bad(fmt.Sprintf("body length %d exceeds %d", n, maxBodySize), nil)
	}
	body := data[headerSizeV1:]
	if uint64(len(body)) != uint64(n) {
		return bad(fmt.Sprintf("body is %d bytes, header says %d", len(body), n), nil)
	}
	if want, got := binary.BigEndian.Uint32(data[16:]), crc32.Checksum(body, castagnoli); got != want {
		return bad(fmt.Sprintf("checksum mismatch: header %08x, body %08x", want, got), nil)
	}
	var m Metadata
	if problem, err := decodeJSON(body, &m); problem != "" {
		return bad(problem, err)
	}
	for i := range m.Operators {
		for j := range m.Operators[i].Subtasks {
			if m.Operators[i].Subtasks[j].ExtraFiles != nil {
				return bad(fmt.Sprintf("operator %q subtask %d: extra files in a version 1 file", m.Operators[i].ID, j), nil)
			}
		}
	}
	normalize(&m)
	if err := m.Validate(); err != nil {
		return bad("invalid", err)
	}
	return &m, nil
}

// decodeJSON decodes exactly one JSON value of body into v, refusing
// unknown fields; on failure it returns the problem and its cause.
func decodeJSON(body []byte, v any) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "malformed body", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "trailing data after the body", nil
	}
	return "", nil
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
