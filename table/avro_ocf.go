package table

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/zstd"
)

// Avro object container files (manifests, manifest lists, index manifests).
//
// Records are encoded and decoded by hamba/avro; the container framing around
// them is done here because it is small and the framing is where corrupt
// input hurts: every length is checked against the bytes that remain before
// anything is allocated, decompressed blocks are bounded, and the sync marker
// comes from the caller so output is a function of the table's random source.

const (
	avroCodecNull      = "null"
	avroCodecDeflate   = "deflate"
	avroCodecSnappy    = "snappy"
	avroCodecZstandard = "zstandard"

	// avroMaxBlockBytes bounds one decompressed block. Paimon writes blocks of
	// about 64 KiB and manifests of a few MiB.
	avroMaxBlockBytes = 64 << 20
	// avroMaxArrayItems bounds the length of one array in a record (null
	// counts per column, extra files, deletion-vector ranges per bucket), so a
	// corrupt count cannot make the decoder allocate gigabytes up front.
	avroMaxArrayItems = 1 << 20
	// avroMaxBytesField bounds one bytes or string field (keys, stats rows).
	avroMaxBytesField = 16 << 20
	// avroBlockRecords is how many records go in one block we write.
	avroBlockRecords = 1024
)

var avroMagic = []byte{'O', 'b', 'j', 1}

// avroAPI decodes records with bounds on what corrupt lengths can allocate.
var avroAPI = avro.Config{
	MaxByteSliceSize:  avroMaxBytesField,
	MaxSliceAllocSize: avroMaxArrayItems,
}.Freeze()

var (
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(avroMaxBlockBytes), zstd.WithDecoderMaxWindow(avroMaxBlockBytes))
)

// avroWriterSchema is a writer schema kept both parsed and in the exact text
// that goes into a file's header.
type avroWriterSchema struct {
	text   string
	schema avro.Schema
}

func mustAvroSchema(text string) avroWriterSchema {
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		panic(fmt.Sprintf("avro schema: %v", err))
	}
	return avroWriterSchema{text: text, schema: s}
}

// writerSchemas caches parsed writer schemas by their text: parsing costs far
// more than decoding a manifest, and a table's files carry only a handful of
// distinct schemas. The cache is bounded so arbitrary input cannot grow it.
var writerSchemas = struct {
	sync.Mutex
	m map[string]avro.Schema
}{m: make(map[string]avro.Schema)}

const writerSchemaCacheSize = 64

func parseWriterSchema(text []byte) (avro.Schema, error) {
	writerSchemas.Lock()
	s, ok := writerSchemas.m[string(text)]
	writerSchemas.Unlock()
	if ok {
		return s, nil
	}
	// A fresh cache per parse: named types of one file must not leak into
	// the parse of another.
	s, err := avro.ParseBytesWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, err
	}
	if err := checkWriterSchema(s, 0); err != nil {
		return nil, err
	}
	writerSchemas.Lock()
	if len(writerSchemas.m) < writerSchemaCacheSize {
		writerSchemas.m[string(text)] = s
	}
	writerSchemas.Unlock()
	return s, nil
}

// avroMaxSchemaDepth bounds the nesting of a writer schema; Paimon's go
// four levels deep.
const avroMaxSchemaDepth = 32

// checkWriterSchema rejects what no Paimon manifest has and what the record
// decoder cannot survive: references to named types (a recursive schema
// sends hamba/avro's skip decoder into unbounded recursion) and deep nesting.
func checkWriterSchema(s avro.Schema, depth int) error {
	if depth > avroMaxSchemaDepth {
		return fmt.Errorf("nested deeper than %d levels", avroMaxSchemaDepth)
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		return fmt.Errorf("reference to the named type %s", s.Schema().FullName())
	case *avro.RecordSchema:
		for _, f := range s.Fields() {
			if err := checkWriterSchema(f.Type(), depth+1); err != nil {
				return fmt.Errorf("field %s: %w", f.Name(), err)
			}
		}
	case *avro.ArraySchema:
		return checkWriterSchema(s.Items(), depth+1)
	case *avro.MapSchema:
		return checkWriterSchema(s.Values(), depth+1)
	case *avro.UnionSchema:
		for _, t := range s.Types() {
			if err := checkWriterSchema(t, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeOCF writes records (values of the Go type the schema maps to) as an
// object container file with the given codec and sync marker.
func encodeOCF[T any](ws avroWriterSchema, codec string, syncMarker [16]byte, records []T) ([]byte, error) {
	out := append([]byte(nil), avroMagic...)
	out = binary.AppendVarint(out, 2)
	out = appendAvroBytes(out, []byte("avro.schema"))
	out = appendAvroBytes(out, []byte(ws.text))
	out = appendAvroBytes(out, []byte("avro.codec"))
	out = appendAvroBytes(out, []byte(codec))
	out = binary.AppendVarint(out, 0)
	out = append(out, syncMarker[:]...)
	var block bytes.Buffer
	for start := 0; start < len(records); start += avroBlockRecords {
		end := min(start+avroBlockRecords, len(records))
		block.Reset()
		enc := avroAPI.NewEncoder(ws.schema, &block)
		for i := start; i < end; i++ {
			if err := enc.Encode(records[i]); err != nil {
				return nil, fmt.Errorf("avro encode record %d: %w", i, err)
			}
		}
		data, err := compressAvroBlock(codec, block.Bytes())
		if err != nil {
			return nil, err
		}
		out = binary.AppendVarint(out, int64(end-start))
		out = binary.AppendVarint(out, int64(len(data)))
		out = append(out, data...)
		out = append(out, syncMarker[:]...)
	}
	return out, nil
}

func appendAvroBytes(b, v []byte) []byte {
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

func compressAvroBlock(codec string, raw []byte) ([]byte, error) {
	switch codec {
	case avroCodecNull:
		return raw, nil
	case avroCodecZstandard:
		return zstdEncoder.EncodeAll(raw, nil), nil
	case avroCodecSnappy:
		out := snappy.Encode(nil, raw)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(raw)), nil
	case avroCodecDeflate:
		var buf bytes.Buffer
		w := deflateWriters.Get().(*flate.Writer)
		defer deflateWriters.Put(w)
		// A reset writer is equivalent to a new one (same level, no
		// dictionary), so the bytes are those of a fresh writer.
		w.Reset(&buf)
		w.Write(raw)
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("avro codec %q is not supported", codec)
}

// deflateWriters keeps deflate writers between blocks: a writer holds about
// 800 KiB of window and hash tables, which every block would otherwise
// allocate and zero anew (most manifests are one small block).
var deflateWriters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(nil, flate.DefaultCompression)
	if err != nil {
		panic(fmt.Sprintf("deflate writer: %v", err)) // the level is valid
	}
	return w
}}

// decodeOCF reads every record of an object container file into *T, binding
// fields by name through the file's own writer schema: fields we do not know
// are skipped and fields the file lacks stay zero. file names the source in
// errors.
func decodeOCF[T any](file string, data []byte) ([]*T, error) {
	r := &avroFrame{file: file, data: data}
	if !bytes.HasPrefix(data, avroMagic) {
		return nil, r.errorf("not an Avro object container file (bad magic)")
	}
	r.pos = len(avroMagic)
	meta, err := r.metadata()
	if err != nil {
		return nil, err
	}
	schemaText, ok := meta["avro.schema"]
	if !ok {
		return nil, r.errorf("header has no avro.schema")
	}
	schema, err := parseWriterSchema(schemaText)
	if err != nil {
		return nil, r.errorf("writer schema: %v", err)
	}
	codec := avroCodecNull
	if c, ok := meta["avro.codec"]; ok {
		codec = string(c)
	}
	headerSync, err := r.take(16)
	if err != nil {
		return nil, err
	}
	var out []*T
	for r.pos < len(r.data) {
		count, err := r.long()
		if err != nil {
			return nil, err
		}
		size, err := r.long()
		if err != nil {
			return nil, err
		}
		if count < 0 || size < 0 {
			return nil, r.errorf("block with %d records of %d bytes", count, size)
		}
		// Every record takes at least one byte, so count cannot exceed the
		// decompressed block size.
		if count > avroMaxBlockBytes {
			return nil, r.errorf("block claims %d records", count)
		}
		blockAt := r.pos
		compressed, err := r.take(size)
		if err != nil {
			return nil, err
		}
		raw, err := decompressAvroBlock(codec, compressed)
		if err != nil {
			return nil, fmt.Errorf("%s: block at offset %d: %w", file, blockAt, err)
		}
		dec := avroAPI.NewDecoder(schema, bytes.NewReader(raw))
		for i := int64(0); i < count; i++ {
			var rec *T
			if err := dec.Decode(&rec); err != nil {
				return nil, fmt.Errorf("%s: record %d: %w", file, len(out), err)
			}
			if rec == nil {
				return nil, fmt.Errorf("%s: record %d is null", file, len(out))
			}
			out = append(out, rec)
		}
		marker, err := r.take(16)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(marker, headerSync) {
			return nil, r.errorf("sync marker after block at offset %d does not match the header", blockAt)
		}
	}
	return out, nil
}

func decompressAvroBlock(codec string, b []byte) ([]byte, error) {
	switch codec {
	case avroCodecNull:
		return b, nil
	case avroCodecZstandard:
		out, err := zstdDecoder.DecodeAll(b, nil)
		if err != nil {
			return nil, fmt.Errorf("zstandard: %w", err)
		}
		return out, nil
	case avroCodecSnappy:
		if len(b) < 4 {
			return nil, errors.New("snappy block without its CRC")
		}
		n, err := snappy.DecodedLen(b[:len(b)-4])
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n > avroMaxBlockBytes {
			return nil, fmt.Errorf("snappy block of %d bytes exceeds %d", n, avroMaxBlockBytes)
		}
		out, err := snappy.Decode(nil, b[:len(b)-4])
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if crc32.ChecksumIEEE(out) != binary.BigEndian.Uint32(b[len(b)-4:]) {
			return nil, errors.New("snappy block CRC mismatch")
		}
		return out, nil
	case avroCodecDeflate:
		out, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(b)), avroMaxBlockBytes+1))
		if err != nil {
			return nil, fmt.Errorf("deflate: %w", err)
		}
		if len(out) > avroMaxBlockBytes {
			return nil, fmt.Errorf("deflate block exceeds %d bytes", avroMaxBlockBytes)
		}
		return out, nil
	}
	return nil, fmt.Errorf("avro codec %q is not supported", codec)
}

// avroFrame reads the container framing with bounds checks.
type avroFrame struct {
	file string
	data []byte
	pos  int
}

func (r *avroFrame) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", r.file, fmt.Sprintf(format, args...))
}

func (r *avroFrame) long() (int64, error) {
	v, n := binary.Varint(r.data[r.pos:])
	if n <= 0 {
		return 0, r.errorf("truncated or malformed varint at offset %d", r.pos)
	}
	r.pos += n
	return v, nil
}

func (r *avroFrame) take(n int64) ([]byte, error) {
	if n < 0 || n > int64(len(r.data)-r.pos) {
		return nil, r.errorf("truncated: %d bytes needed at offset %d, %d left", n, r.pos, len(r.data)-r.pos)
	}
	b := r.data[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

func (r *avroFrame) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	return r.take(n)
}

// metadata reads the header's map<bytes>, a sequence of blocks ending with a
// zero count; a negative count is followed by the block's byte size.
func (r *avroFrame) metadata() (map[string][]byte, error) {
	meta := make(map[string][]byte)
	for {
		count, err := r.long()
		if err != nil {
			return nil, err
		}
		if count == 0 {
			return meta, nil
		}
		if count < 0 {
			if _, err := r.long(); err != nil {
				return nil, err
			}
			count = -count
		}
		if count < 0 || count > int64(len(r.data)-r.pos) {
			return nil, r.errorf("header map claims %d entries", count)
		}
		for i := int64(0); i < count; i++ {
			k, err := r.bytes()
			if err != nil {
				return nil, err
			}
			v, err := r.bytes()
			if err != nil {
				return nil, err
			}
			meta[string(k)] = v
		}
	}
}
