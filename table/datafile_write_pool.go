package table

import (
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// What every data file of a schema shares (its column layout and parquet
// writer options) is made once per schema, codec and page buffer size, and
// a writer's scratch buffers are pooled. The parquet writer itself is not
// reused: parquet-go's Writer.Reset clears the column paths its finished
// row groups share with the column writers, so a file written after a
// Reset has empty path_in_schema entries in its footer.

// dataFileKit is what every data file of one schema, codec and page buffer
// size shares: the column layout, the parquet writer options and idle
// scratch buffers.
type dataFileKit struct {
	fields   []Field // the schema's fields when the kit was made
	pks      []string
	parts    []string
	layout   *dataFileLayout
	cfg      []parquet.WriterOption
	keyField []bool // per schema field: is it a trimmed primary key
	// per schema field: are its stats the column chunk's (chunkStatsType)
	chunkStats []bool
	idle       sync.Pool
}

// dataFileScratch is one writer's reusable buffers.
type dataFileScratch struct {
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
	cfg, err := parquetWriterOptions(layout, s, opts, pageBuffer)
	if err != nil {
		return nil, err
	}
	k = &dataFileKit{
		fields:   slices.Clone(s.Fields),
		pks:      slices.Clone(s.PrimaryKeys),
		parts:    slices.Clone(s.PartitionKeys),
		layout:   layout,
		cfg:      cfg,
		keyField: make([]bool, len(s.Fields)),
	}
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
	return &dataFileScratch{}
}

// release returns a closed writer's scratch buffers.
func (k *dataFileKit) release(sc *dataFileScratch) { k.idle.Put(sc) }
