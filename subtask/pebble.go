package subtask

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/lakestate/lakestate/table"
)

// PebbleBackend keeps a store's committed tables in one Pebble database, the
// RocksDB-style baseline: the WAL is off (the checkpoint is the log), a
// commit is one sorted write batch, point reads use one iterator with a
// bloom-filtered seek per sorted key, and a checkpoint is a memtable flush plus
// Pebble's hard-link checkpoint. A table's rows live under the key prefix
// name+0x00; the value is the row codec of the non-key datums.
type PebbleBackend struct {
	db     *pebble.DB
	opts   PebbleOptions
	tables map[string]*pebbleTable
	closed bool
}

// PebbleOptions configures a Pebble backend.
type PebbleOptions struct {
	// FS is the filesystem; nil means the operating system's.
	FS vfs.FS
	// MemTableSize defaults to 64 MiB.
	MemTableSize uint64
	// Logger receives Pebble's messages; nil drops informational ones.
	Logger pebble.Logger
	// CheckpointDir names the directory (which must not exist) that receives
	// checkpoint id's hard-link copy of the database; nil flushes without
	// making one.
	CheckpointDir func(id int64) string
}

const pebbleShapePrefix = "\x00shape\x00"

type pebbleTable struct {
	b      *PebbleBackend
	l      *layout
	prefix []byte // name + 0x00
	upper  []byte
	types  []table.DataType
	seek   []byte // scratch
}

// OpenPebble opens (or creates) the Pebble backend in dir. To restore, open
// the directory a checkpoint's files were restored into.
func OpenPebble(dir string, o PebbleOptions) (*PebbleBackend, error) {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = quietLogger{}
	}
	opts := &pebble.Options{FS: o.FS, DisableWAL: true, MemTableSize: o.MemTableSize, Logger: o.Logger}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebble backend %s: %w", dir, err)
	}
	return &PebbleBackend{db: db, opts: o, tables: map[string]*pebbleTable{}}, nil
}

// quietLogger drops Pebble's informational messages and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// tableShape renders what must match for a table to be reopened.
func tableShape(l *layout) []byte {
	var b []byte
	b = append(b, byte(l.Kind), byte(len(l.pkTypes)))
	for _, c := range l.columns() {
		b = appendString(b, c.Name)
		b = appendString(b, c.Type.String())
	}
	return b
}

func (b *PebbleBackend) open(l *layout) (committedTable, error) {
	if t, ok := b.tables[l.Name]; ok {
		if !t.l.sameShape(l) {
			return nil, fmt.Errorf("pebble backend: table %q opened with two shapes", l.Name)
		}
		return t, nil
	}
	shape := tableShape(l)
	shapeKey := []byte(pebbleShapePrefix + l.Name)
	have, closer, err := b.db.Get(shapeKey)
	switch {
	case err == pebble.ErrNotFound:
		if err := b.db.Set(shapeKey, shape, pebble.NoSync); err != nil {
			return nil, fmt.Errorf("pebble backend: table %q: %w", l.Name, err)
		}
	case err != nil:
		return nil, fmt.Errorf("pebble backend: table %q: %w", l.Name, err)
	default:
		same := bytes.Equal(have, shape)
		closer.Close()
		if !same {
			return nil, fmt.Errorf("pebble backend: table %q exists with another shape", l.Name)
		}
	}
	prefix := append([]byte(l.Name), 0)
	t := &pebbleTable{b: b, l: l, prefix: prefix, upper: []byte(prefixEnd(string(prefix))), types: l.valTypes()}
	b.tables[l.Name] = t
	return t, nil
}

func (b *PebbleBackend) commit(c commitRequest) (Checkpoint, error) {
	cp := Checkpoint{ID: c.id}
	// One batch in key order: tables by name, rows by key.
	order := make([]int, len(c.writes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		return strings.Compare(c.writes[x].layout.Name, c.writes[y].layout.Name)
	})
	batch := b.db.NewBatch()
	defer batch.Close()
	var key, val []byte
	for _, i := range order {
		w := c.writes[i]
		t := w.table.(*pebbleTable)
		for _, m := range w.rows {
			key = append(append(key[:0], t.prefix...), m.key...)
			var err error
			if m.delete {
				err = batch.Delete(key, nil)
			} else {
				val = appendRow(val[:0], t.types, m.vals)
				err = batch.Set(key, val, nil)
			}
			if err != nil {
				return Checkpoint{}, fmt.Errorf("pebble backend: %w", err)
			}
		}
	}
	for _, w := range c.writes {
		cp.Tables = append(cp.Tables, tableCheckpoint(w))
	}
	if !batch.Empty() {
		if err := b.db.Apply(batch, pebble.NoSync); err != nil {
			return Checkpoint{}, fmt.Errorf("pebble backend: %w", err)
		}
	}
	if !c.checkpoint {
		return cp, nil
	}
	if err := b.db.Flush(); err != nil {
		return Checkpoint{}, fmt.Errorf("pebble backend: flush of checkpoint %d: %w", c.id, err)
	}
	if b.opts.CheckpointDir != nil {
		cp.Dir = b.opts.CheckpointDir(c.id)
		if err := b.db.Checkpoint(cp.Dir); err != nil {
			return Checkpoint{}, fmt.Errorf("pebble backend: checkpoint %d into %s: %w", c.id, cp.Dir, err)
		}
	}
	return cp, nil
}

func (b *PebbleBackend) repin() error { return nil }

// Close closes the database; closing twice does nothing.
func (b *PebbleBackend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	return b.db.Close()
}

func (t *pebbleTable) iter(lower, upper []byte) (*pebble.Iterator, error) {
	return t.b.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
}

func (t *pebbleTable) decode(v []byte) (Row, error) {
	r, n, err := decodeRow(v, t.types)
	if err == nil && n != len(v) {
		err = fmt.Errorf("%d trailing bytes", len(v)-n)
	}
	if err != nil {
		return nil, fmt.Errorf("pebble backend: table %q: value: %w", t.l.Name, err)
	}
	return r, nil
}

// mayHold leaves every key to the read: its bloom filters answer misses.
func (t *pebbleTable) mayHold(string) bool { return true }

func (t *pebbleTable) get(keys []string, found func(int, Row)) error {
	it, err := t.iter(t.prefix, t.upper)
	if err != nil {
		return err
	}
	for i, k := range keys {
		t.seek = append(append(t.seek[:0], t.prefix...), k...)
		if !it.SeekPrefixGE(t.seek) || !bytes.Equal(it.Key(), t.seek) {
			continue
		}
		r, err := t.decode(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		found(i, r)
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

func (t *pebbleTable) scanPrefixes(prefixes []string, fn func(int, entry)) error {
	it, err := t.iter(t.prefix, t.upper)
	if err != nil {
		return err
	}
	n := len(t.prefix)
	for i, p := range prefixes {
		t.seek = append(append(t.seek[:0], t.prefix...), p...)
		for ok := it.SeekGE(t.seek); ok && bytes.HasPrefix(it.Key(), t.seek); ok = it.Next() {
			r, err := t.decode(it.Value())
			if err != nil {
				it.Close()
				return err
			}
			fn(i, entry{key: string(it.Key()[n:]), vals: r})
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

func (t *pebbleTable) scan(from, to string, fn func(entry) bool) error {
	lower := append(slices.Clip(t.prefix), from...)
	upper := t.upper
	if to != "" {
		upper = append(slices.Clip(t.prefix), to...)
	}
	it, err := t.iter(lower, upper)
	if err != nil {
		return err
	}
	n := len(t.prefix)
	for ok := it.First(); ok; ok = it.Next() {
		r, err := t.decode(it.Value())
		if err != nil {
			it.Close()
			return err
		}
		if !fn(entry{key: string(it.Key()[n:]), vals: r}) {
			break
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}
