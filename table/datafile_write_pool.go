package table

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// What every data file of a schema shares (its column layout and parquet
// writer options) is made once per schema, codec and page buffer size, and
// a writer's scratch buffers are pooled. The parquet writer itself is not
// reused: parquet-go's Writer.Reset clears the column paths its finished
// row groups share with the column writers, so a file written after a
// Reset has empty path_in_schema entries in its footer.

// dataFileKit is what every data file of one schema, codec and page buffer
// size shares: the column layout, the options of its parquet writers and
// idle scratch buffers.
type dataFileKit struct {
	fields     []Field // the schema's fields when the kit was made
	pks        []string
	parts      []string
	layout     *dataFileLayout
	opts       DataFileOptions // its codec resolved
	pageBuffer int
	keyField   []bool // per schema field: is it a trimmed primary key
	// per schema field: are its stats the column chunk's (chunkStatsType)
	chunkStats []bool
	// tmpl is nil where the page writer does not write the schema's files
	// (directOK): parquet-go's writer writes them.
	tmpl *directTemplate
	idle sync.Pool
}

// dataFileScratch is one writer's reusable buffers, and its parquet writer
// options: the codecs of a framed zstd schema keep state of the writer's
// pages (twinPage), so no two writers share them.
type dataFileScratch struct {
	cfg    []parquet.WriterOption
	codecs []compress.Codec // of each leaf column, nil for none
	pw     *pageWriter      // nil before the first file of the page writer
	values []parquet.Value
	keys   KeyBatch
	order  keyOrder
}

type dataFileKitKey struct {
	schema     *Schema
	codec      string
	frameBytes int
	frameRows  int
	pageBuffer int
}

// maxDataFileKits bounds the cache; a process writes few schemas, tests many.
const maxDataFileKits = 64

var dataFileKits = struct {
	sync.Mutex
	m map[dataFileKitKey]*dataFileKit
}{m: map[dataFileKitKey]*dataFileKit{}}

// kitFor returns the kit of s, opts' codec (and zstd frame size) and a page
// buffer size. A schema
// edited in place since its kit was made gets a new kit.
func kitFor(s *Schema, opts DataFileOptions, pageBuffer int) (*dataFileKit, error) {
	key := dataFileKitKey{s, resolvedCodec(s, opts), opts.ZstdFrameBytes, opts.ZstdFrameRows, pageBuffer}
	dataFileKits.Lock()
	k := dataFileKits.m[key]
	dataFileKits.Unlock()
	if k != nil && k.matches(s) {
		return k, nil
	}
	layout, err := newDataFileLayout(s)
	if err != nil {
		return nil, err
	}
	opts.Compression, opts.Uncompressed = key.codec, false
	cfg, err := parquetWriterOptions(layout, s, opts, pageBuffer)
	if err != nil {
		return nil, err
	}
	k = &dataFileKit{
		fields:     slices.Clone(s.Fields),
		pks:        slices.Clone(s.PrimaryKeys),
		parts:      slices.Clone(s.PartitionKeys),
		layout:     layout,
		opts:       opts,
		pageBuffer: pageBuffer,
		keyField:   make([]bool, len(s.Fields)),
	}
	if directOK(s) {
		if k.tmpl, err = newDirectTemplate(cfg); err != nil {
			return nil, err
		}
	}
	k.idle.Put(newDataFileScratch(layout, cfg))
	for _, fi := range layout.keyIdx {
		k.keyField[fi] = true
	}
	k.chunkStats = make([]bool, len(s.Fields))
	for i, f := range s.Fields {
		k.chunkStats[i] = chunkStatsType(f.Type)
	}
	dataFileKits.Lock()
	if len(dataFileKits.m) >= maxDataFileKits {
		clear(dataFileKits.m)
	}
	dataFileKits.m[key] = k
	dataFileKits.Unlock()
	return k, nil
}

func (k *dataFileKit) matches(s *Schema) bool {
	return slices.Equal(k.fields, s.Fields) && slices.Equal(k.pks, s.PrimaryKeys) &&
		slices.Equal(k.parts, s.PartitionKeys)
}

// scratch takes idle scratch buffers or makes them.
func (k *dataFileKit) scratch() *dataFileScratch {
	if sc, ok := k.idle.Get().(*dataFileScratch); ok {
		return sc
	}
	cfg, err := parquetWriterOptions(k.layout, k.layout.schema, k.opts, k.pageBuffer)
	if err != nil {
		panic(fmt.Sprintf("data file: the options that made a kit fail: %v", err))
	}
	return newDataFileScratch(k.layout, cfg)
}

func newDataFileScratch(l *dataFileLayout, cfg []parquet.WriterOption) *dataFileScratch {
	return &dataFileScratch{cfg: cfg, codecs: leafCodecs(l, cfg)}
}

// leafCodecs are the codecs parquet-go's writer compresses each leaf
// column with under cfg: the leaf's own, else the writer's; nil for none.
func leafCodecs(l *dataFileLayout, cfg []parquet.WriterOption) []compress.Codec {
	config, err := parquet.NewWriterConfig(cfg...)
	if err != nil {
		panic(fmt.Sprintf("data file: writer options of a kit fail: %v", err))
	}
	codecs := make([]compress.Codec, len(l.fields))
	leaves := config.Schema.Fields()
	for i := range codecs {
		c := leaves[i].Compression()
		if c == nil {
			c = config.Compression
		}
		if c != nil && c.CompressionCodec() != format.Uncompressed {
			codecs[i] = c
		}
	}
	return codecs
}

// release returns a closed writer's scratch buffers.
func (k *dataFileKit) release(sc *dataFileScratch) { k.idle.Put(sc) }

// pageBuffers hold the pages of each column chunk of a row group until the
// group is written out (parquet.ColumnPageBuffers). parquet-go's own pool
// frees a buffer's memory when the buffer comes back, so every file
// allocated its size again, and writes a buffer out in 32 KiB chunks
// through its 32 KiB write buffer: with a page header or footer left in
// that buffer, each chunk was copied into it before its write. A
// pageBuffer's chunks come from free lists that keep them across files
// (a sync.Pool would drop them at every GC cycle, which a writer's
// allocations bring about every few files), and all chunks but a buffer's
// first are large, so that most of a large column chunk goes from the
// write buffer straight to the file.
var pageBuffers = &pageBufferPool{}

const (
	firstPageChunk = 16 << 10
	pageChunk      = 256 << 10
	// The free lists keep at most this many chunks of each size.
	maxFreeFirstChunks = 1024
	maxFreePageChunks  = 256
)

type pageBufferPool struct {
	mu          sync.Mutex
	first, rest [][]byte // free chunks of firstPageChunk and pageChunk bytes
}

func (p *pageBufferPool) GetBuffer() io.ReadWriteSeeker { return &pageBuffer{pool: p} }

func (p *pageBufferPool) PutBuffer(rws io.ReadWriteSeeker) {
	if b, ok := rws.(*pageBuffer); ok {
		b.release()
	}
}

// chunk takes a free chunk of the given size or makes one.
func (p *pageBufferPool) chunk(first bool) []byte {
	p.mu.Lock()
	list := &p.rest
	if first {
		list = &p.first
	}
	if n := len(*list); n > 0 {
		c := (*list)[n-1]
		(*list)[n-1] = nil
		*list = (*list)[:n-1]
		p.mu.Unlock()
		return c
	}
	p.mu.Unlock()
	if first {
		return make([]byte, firstPageChunk)
	}
	return make([]byte, pageChunk)
}

// free keeps chunks for later buffers, up to the lists' bounds.
func (p *pageBufferPool) free(chunks [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range chunks {
		if i == 0 {
			if len(p.first) < maxFreeFirstChunks {
				p.first = append(p.first, c)
			}
		} else if len(p.rest) < maxFreePageChunks {
			p.rest = append(p.rest, c)
		}
	}
}

// pageBuffer is an in-memory io.ReadWriteSeeker over chunks that are never
// moved: it grows by a chunk.
type pageBuffer struct {
	pool   *pageBufferPool
	chunks [][]byte // each chunk's length is its capacity
	size   int      // bytes written
	at     int      // the position of the next Read or Write
}

// release hands the chunks back to the pool and empties the buffer.
func (b *pageBuffer) release() {
	b.pool.free(b.chunks)
	clear(b.chunks)
	b.chunks, b.size, b.at = b.chunks[:0], 0, 0
}

// locate is the chunk of byte offset off and the offset in it.
func (b *pageBuffer) locate(off int) (int, int) {
	for i, c := range b.chunks {
		if off < len(c) {
			return i, off
		}
		off -= len(c)
	}
	return len(b.chunks), off
}

func (b *pageBuffer) Write(p []byte) (int, error) {
	n := len(p)
	i, off := b.locate(b.at)
	for len(p) > 0 {
		if i == len(b.chunks) {
			b.chunks = append(b.chunks, b.pool.chunk(i == 0))
		}
		c := copy(b.chunks[i][off:], p)
		p = p[c:]
		i, off = i+1, 0
	}
	b.at += n
	b.size = max(b.size, b.at)
	return n, nil
}

func (b *pageBuffer) Read(p []byte) (int, error) {
	if b.at >= b.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	i, off := b.locate(b.at)
	c := b.chunks[i][off:min(len(b.chunks[i]), off+b.size-b.at)]
	n := copy(p, c)
	b.at += n
	return n, nil
}

// WriteTo writes the rest of the buffer a chunk per Write (io.Copy takes
// it).
func (b *pageBuffer) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for b.at < b.size {
		i, off := b.locate(b.at)
		c := b.chunks[i][off:min(len(b.chunks[i]), off+b.size-b.at)]
		n, err := w.Write(c)
		b.at += n
		total += int64(n)
		if err == nil && n < len(c) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (b *pageBuffer) Seek(offset int64, whence int) (int64, error) {
	var at int64
	switch whence {
	case io.SeekStart:
		at = offset
	case io.SeekCurrent:
		at = int64(b.at) + offset
	case io.SeekEnd:
		at = int64(b.size) + offset
	default:
		return 0, fmt.Errorf("page buffer: seek whence %d", whence)
	}
	if at < 0 {
		return 0, fmt.Errorf("page buffer: seek to %d", at)
	}
	b.at = int(min(at, int64(b.size)))
	return int64(b.at), nil
}
