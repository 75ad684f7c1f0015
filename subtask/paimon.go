package subtask

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// PaimonBackend keeps each state table of a store as a Paimon primary-key
// table in its own directory under a root (root/<state name>). A flush
// commits each table's buffer as one sorted Arrow record with one APPEND
// snapshot; reads go through a View pinned at the table's newest snapshot,
// planned once per pin. The maintenance round that makes a deletion-vector
// table's new level-0 run readable, the file listing and the upload belong to
// the barrier: after the round, Store.Repin pins the round's snapshot.
type PaimonBackend struct {
	root   string
	opts   PaimonOptions
	tables map[string]*paimonTable
}

// PaimonOptions configures a paimon backend.
type PaimonOptions struct {
	// FileIO is the table file system; nil means the local one.
	FileIO table.FileIO
	// Buckets per table; 0 means 1.
	Buckets int
	// NoDeletionVectors creates tables without deletion vectors, whose reads
	// merge sorted runs instead of skipping level 0: a mode for tests that run
	// without the maintenance round. Production tables always keep vectors.
	NoDeletionVectors bool
	// FileCompression is the data files' codec (file.compression); "" means
	// "none": state files are re-read on every probe from the page cache,
	// where decompression is the dominant cost.
	FileCompression string
	// CommitUser names the store's commits; "" means "subtask".
	CommitUser string
	// TableOptions are passed to table.Create and table.Open.
	TableOptions []table.Option
}

type paimonTable struct {
	b     *PaimonBackend
	l     *layout
	t     *table.Table
	codec *paimonCodec // reads
	// writer builds the records of commits, which may run on another
	// goroutine than the reads (FrozenFlush.Commit).
	writer   *paimonCodec
	view     *table.View // nil before the first commit
	snapshot int64       // the pinned snapshot, 0 for none
	// nextIdent is the commit identifier of the next commit: above every
	// identifier this user committed before, so an idempotent retry of a
	// commit that landed is recognized and nothing else is.
	nextIdent int64
	// bounds answer probes of keys the table cannot hold; kept and at are
	// the probed keys that pass them and their positions.
	bounds keyBounds
	kept   []string
	at     []int32
}

// OpenPaimon opens the paimon backend of a store rooted at root. Tables that
// exist there (a restored checkpoint) are opened when their state registers.
func OpenPaimon(root string, o PaimonOptions) (*PaimonBackend, error) {
	if o.FileIO == nil {
		o.FileIO = table.NewLocalFileIO()
	}
	if o.Buckets == 0 {
		o.Buckets = 1
	}
	if o.Buckets < 0 {
		return nil, fmt.Errorf("paimon backend %s: %d buckets", root, o.Buckets)
	}
	if o.CommitUser == "" {
		o.CommitUser = "subtask"
	}
	if o.FileCompression == "" {
		o.FileCompression = "none"
	}
	return &PaimonBackend{root: root, opts: o, tables: map[string]*paimonTable{}}, nil
}

// Root is the directory holding the tables.
func (b *PaimonBackend) Root() string { return b.root }

// Table returns the Paimon table of a registered state, for the barrier's
// maintenance round and listing.
func (b *PaimonBackend) Table(name string) (*table.Table, bool) {
	t, ok := b.tables[name]
	if !ok {
		return nil, false
	}
	return t.t, true
}

func (b *PaimonBackend) open(l *layout) (committedTable, error) {
	if t, ok := b.tables[l.Name]; ok {
		if !t.l.sameShape(l) {
			return nil, fmt.Errorf("paimon backend: table %q opened with two shapes", l.Name)
		}
		return t, nil
	}
	dir := path.Join(b.root, l.Name)
	want := paimonSchema(l, b.opts.Buckets, !b.opts.NoDeletionVectors)
	want.Options[table.OptionFileCompression] = b.opts.FileCompression
	schemas, err := b.opts.FileIO.List(path.Join(dir, "schema"))
	if err != nil {
		return nil, fmt.Errorf("paimon backend: table %s: %w", dir, err)
	}
	var tbl *table.Table
	if len(schemas) == 0 {
		tbl, err = table.Create(b.opts.FileIO, dir, want, b.opts.TableOptions...)
	} else {
		tbl, err = table.Open(b.opts.FileIO, dir, b.opts.TableOptions...)
		if err == nil {
			err = checkPaimonSchema(tbl.Schema(), &want)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("paimon backend: table %s: %w", dir, err)
	}
	codec, err := newPaimonCodec(l)
	if err != nil {
		return nil, err
	}
	writer, err := newPaimonCodec(l)
	if err != nil {
		return nil, err
	}
	t := &paimonTable{b: b, l: l, t: tbl, codec: codec, writer: writer}
	if t.nextIdent, err = nextCommitIdentifier(tbl, b.opts.CommitUser); err != nil {
		return nil, fmt.Errorf("paimon backend: table %s: %w", dir, err)
	}
	if err := t.pinLatest(); err != nil {
		return nil, err
	}
	t.bounds.known = t.snapshot == 0
	b.tables[l.Name] = t
	return t, nil
}

// checkPaimonSchema refuses a restored table of another shape, and a
// deletion-vector mismatch in either direction.
func checkPaimonSchema(have, want *table.Schema) error {
	switch {
	case have.DeletionVectors() && !want.DeletionVectors():
		return errors.New("the table keeps deletion vectors; reading it needs the maintenance round (the compactor)")
	case !have.DeletionVectors() && want.DeletionVectors():
		return errors.New("the table predates deletion vectors")
	}
	if !slices.Equal(have.PrimaryKeys, want.PrimaryKeys) || len(have.Fields) != len(want.Fields) {
		return fmt.Errorf("primary key %v and %d fields, want %v and %d", have.PrimaryKeys, len(have.Fields), want.PrimaryKeys, len(want.Fields))
	}
	for i, f := range want.Fields {
		h := have.Fields[i]
		if h.Name != f.Name || h.Type.Root != f.Type.Root || h.Type.Precision != f.Type.Precision || h.Type.Scale != f.Type.Scale {
			return fmt.Errorf("field %d is %s %s, want %s %s", i, h.Name, h.Type, f.Name, f.Type)
		}
	}
	if n, err := have.Buckets(); err != nil || n != mustBuckets(want) {
		return fmt.Errorf("bucket count %d (%v), want %d", n, err, mustBuckets(want))
	}
	return nil
}

func mustBuckets(s *table.Schema) int {
	n, _ := s.Buckets()
	return n
}

// nextCommitIdentifier walks back from the newest snapshot to the newest
// commit of user.
func nextCommitIdentifier(tbl *table.Table, user string) (int64, error) {
	latest, ok, err := tbl.LatestSnapshotID()
	if err != nil || !ok {
		return 1, err
	}
	earliest, _, err := tbl.EarliestSnapshotID()
	if err != nil {
		return 0, err
	}
	for id := latest; id >= earliest; id-- {
		s, err := tbl.Snapshot(id)
		if err != nil {
			return 0, err
		}
		if s.CommitUser == user {
			return s.CommitIdentifier + 1, nil
		}
	}
	return 1, nil
}

// pinLatest plans a view of the table's newest snapshot unless it is pinned.
func (t *paimonTable) pinLatest() error {
	id, ok, err := t.t.LatestSnapshotID()
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: %w", t.l.Name, err)
	}
	if !ok || id == t.snapshot {
		return nil
	}
	return t.pin(id)
}

func (t *paimonTable) pin(id int64) error {
	view, err := t.openView(id)
	if err != nil {
		return err
	}
	t.setView(view, id)
	return nil
}

// openView opens a view of snapshot id; the reads stay where they are until
// setView. Files the new snapshot shares with the pinned one stay open: a
// barrier moves the reads without reopening the whole table.
func (t *paimonTable) openView(id int64) (*table.View, error) {
	view, err := t.t.ViewReusing(id, t.view)
	if err != nil {
		return nil, fmt.Errorf("paimon backend: table %q: view of snapshot %d: %w", t.l.Name, id, err)
	}
	return view, nil
}

// setView moves the reads to a view openView returned.
func (t *paimonTable) setView(view *table.View, id int64) {
	if t.view != nil {
		t.view.Close()
	}
	t.view, t.snapshot = view, id
}

func (b *PaimonBackend) commit(c commitRequest) (Checkpoint, error) {
	cp := Checkpoint{ID: c.id}
	for _, w := range c.writes {
		t := w.table.(*paimonTable)
		if len(w.rows) > 0 {
			if err := t.write(w.rows, c.nowMillis); err != nil {
				return Checkpoint{}, err
			}
		}
		tc := tableCheckpoint(w)
		tc.Snapshot = t.snapshot
		cp.Tables = append(cp.Tables, tc)
	}
	return cp, nil
}

// write commits one sorted batch as one APPEND snapshot and pins it.
func (t *paimonTable) write(rows []mutation, nowMillis int64) error {
	// Widened before the commit: one that fails may still have landed.
	t.bounds.add(rows)
	id, err := t.commitRows(rows, nowMillis)
	if err != nil {
		return err
	}
	return t.pin(id)
}

// commitRows commits one sorted batch as one APPEND snapshot and returns
// it. It touches the writer codec, the commit identifier and the Paimon
// table only, none of which a read touches.
func (t *paimonTable) commitRows(rows []mutation, nowMillis int64) (int64, error) {
	rec, kinds, err := t.writer.writeRecord(rows)
	if err != nil {
		return 0, err
	}
	id, err := t.commitRecord(rec, kinds, nowMillis)
	rec.Release()
	t.writer.recycle()
	return id, err
}

// commitRecord commits the record of a flush (its rows sorted, at most one
// per key) as one APPEND snapshot and returns it; see commitRows.
func (t *paimonTable) commitRecord(rec arrow.Record, kinds []table.ValueKind, nowMillis int64) (int64, error) {
	res, err := t.t.WriteAndCommit(rec, kinds, table.CommitInfo{User: t.b.opts.CommitUser, Identifier: t.nextIdent, TimeMillis: nowMillis})
	if err != nil {
		return 0, fmt.Errorf("paimon backend: table %q: commit of %d rows: %w", t.l.Name, rec.NumRows(), err)
	}
	t.nextIdent++
	return res.SnapshotID, nil
}

func (b *PaimonBackend) repin() error {
	for _, t := range b.tables {
		if err := t.pinLatest(); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the pinned views.
func (b *PaimonBackend) Close() error {
	var errs []error
	for _, t := range b.tables {
		if t.view != nil {
			errs = append(errs, t.view.Close())
			t.view = nil
		}
	}
	return errors.Join(errs...)
}

func (t *paimonTable) get(all []string, found func(int, Row)) error {
	if t.view == nil || len(all) == 0 {
		return nil
	}
	t.kept, t.at = t.bounds.filter(all, t.kept, t.at)
	keys, at := t.kept, t.at
	defer clear(keys) // keep no key alive
	if len(keys) == 0 {
		return nil
	}
	rec, err := t.codec.keyRecord(keys)
	if err != nil {
		return err
	}
	defer rec.Release()
	res, idx, err := t.view.ProbeIndexed(rec)
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: probe: %w", t.l.Name, err)
	}
	defer res.Release()
	var bad error
	_, err = t.codec.rows(res, false, nil, func(i int, key string, _, vals Row) bool {
		j := int(idx[i])
		if key != keys[j] {
			bad = fmt.Errorf("paimon backend: table %q: probe returned another key for probe %d", t.l.Name, j)
			return false
		}
		found(int(at[j]), vals)
		return true
	})
	if err != nil {
		return err
	}
	return bad
}

func (t *paimonTable) mayHold(p string) bool { return t.bounds.mayHold(p) }

// scanPrefixes reads the rows under every prefix in one sorted pass over the
// table's files (table.View.ScanPrefixes).
func (t *paimonTable) scanPrefixes(all []string, fn func(int, entry)) error {
	if t.view == nil || len(all) == 0 {
		return nil
	}
	t.kept, t.at = t.bounds.filter(all, t.kept, t.at)
	prefixes, at := t.kept, t.at
	defer clear(prefixes) // keep no key alive
	if len(prefixes) == 0 {
		return nil
	}
	ds, err := t.codec.prefixesDatums(prefixes, t.l.prefixCols())
	if err != nil {
		return err
	}
	rec, of, err := t.view.ScanPrefixes(ds)
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: prefix scan: %w", t.l.Name, err)
	}
	defer rec.Release()
	var bad error
	_, err = t.codec.rows(rec, true, nil, func(i int, key string, pk, vals Row) bool {
		j := int(of[i])
		if !strings.HasPrefix(key, prefixes[j]) {
			bad = fmt.Errorf("paimon backend: table %q: prefix scan returned a row outside prefix %d", t.l.Name, j)
			return false
		}
		fn(int(at[j]), entry{key: key, pk: pk, vals: vals})
		return true
	})
	if err != nil {
		return err
	}
	return bad
}

// drain feeds the rows of an iterator that want keeps (nil: all) to fn, until
// fn returns false or want says stop, and closes it.
func (t *paimonTable) drain(it table.RecordIterator, want rowFilter, fn func(entry) bool) error {
	defer it.Close()
	for {
		rec, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("paimon backend: table %q: scan: %w", t.l.Name, err)
		}
		stop, err := t.codec.rows(rec, false, want, func(_ int, key string, _, vals Row) bool {
			return fn(entry{key: key, vals: vals})
		})
		rec.Release()
		if err != nil || stop {
			return err
		}
	}
}

func (t *paimonTable) scan(from, to string, fn func(entry) bool) error {
	if t.view == nil {
		return nil
	}
	// A range inside one key prefix reads in key order from one bucket.
	if p, err := t.l.splitPrefix(from); err == nil {
		prefix := from[:p]
		if strings.HasPrefix(to, prefix) || to == prefixEnd(prefix) {
			return t.scanWithin(prefix, from, to, fn)
		}
	}
	// Otherwise the view's order is not key order (deletion-vector reads go
	// file by file): collect, sort, filter.
	var it table.RecordIterator
	var err error
	if lo, hi, ok := keyGroupSpan(from, to); ok {
		it, err = t.view.ScanKeyGroupRange(lo, hi)
	} else {
		it, err = t.view.ScanAll()
	}
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: scan: %w", t.l.Name, err)
	}
	in := func(k string) rowAction {
		if k < from || to != "" && k >= to {
			return rowSkip
		}
		return rowKeep
	}
	var rows []entry
	if err := t.drain(it, in, func(e entry) bool {
		rows = append(rows, e)
		return true
	}); err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range rows {
		if !fn(e) {
			return nil
		}
	}
	return nil
}

// scanWithin reads [from, to) inside one key prefix with the view's prefix
// range scan on the column after the prefix.
func (t *paimonTable) scanWithin(prefix, from, to string, fn func(entry) bool) error {
	n := t.l.prefixCols()
	datums, _, err := t.codec.prefixDatums(prefix, n)
	if err != nil {
		return err
	}
	lo, hi := table.NullDatum, table.NullDatum
	if n < len(t.l.pkTypes) {
		next := t.l.pkTypes[n]
		if len(from) > len(prefix) {
			if d, _, err := decodeKeyDatum(from[len(prefix):], next); err == nil {
				lo = tableDatum(next, d)
			}
		}
		if strings.HasPrefix(to, prefix) && len(to) > len(prefix) {
			if d, used, err := decodeKeyDatum(to[len(prefix):], next); err == nil {
				// The bound is exclusive on the column only when nothing follows it.
				if len(prefix)+used == len(to) {
					hi = tableDatum(next, d)
				}
			}
		}
	}
	it, err := t.view.ScanPrefixRange(datums, lo, hi)
	if err != nil {
		return fmt.Errorf("paimon backend: table %q: range scan: %w", t.l.Name, err)
	}
	in := func(k string) rowAction {
		switch {
		case to != "" && k >= to:
			return rowStop
		case k < from:
			return rowSkip
		}
		return rowKeep
	}
	return t.drain(it, in, fn)
}

// keyGroupSpan recognizes a range made of key-group bounds (or open ends).
func keyGroupSpan(from, to string) (int32, int32, bool) {
	lo, hi := int32(0), int32(1<<31-1)
	switch len(from) {
	case 0:
	case 4:
		lo = keyGroupOf(from)
	default:
		return 0, 0, false
	}
	switch len(to) {
	case 0:
	case 4:
		hi = keyGroupOf(to) - 1
	default:
		return 0, 0, false
	}
	return lo, hi, true
}
