package table

import (
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// memRow is one row of an in-memory data file; keys order as raw bytes.
type memRow struct {
	key  string
	seq  int64
	kind ValueKind
	val  string
	ts   *int64 // the "ts" field RowExpiry reads
}

// memBucket is an in-memory BucketFiles for tests of the LSM primitives:
// keys are their own encoding and file sizes count rows.
type memBucket struct {
	files    map[string][]memRow
	rollRows int // a writer starts a new file after this many rows (0: never)
	nextID   int
	failOpen string // Open of this file fails
}

func newMemBucket() *memBucket { return &memBucket{files: make(map[string][]memRow)} }

// file stores rows (sorted by key here) as a new file and returns its meta.
func (b *memBucket) file(name string, level int32, rows ...memRow) DataFileMeta {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(x, y memRow) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	b.files[name] = rows
	return memMeta(name, level, rows)
}

func memMeta(name string, level int32, rows []memRow) DataFileMeta {
	var deletes int64
	minSeq, maxSeq := rows[0].seq, rows[0].seq
	for _, r := range rows {
		minSeq, maxSeq = min(minSeq, r.seq), max(maxSeq, r.seq)
		if r.kind.IsRetract() {
			deletes++
		}
	}
	src := SourceCompact
	return DataFileMeta{
		FileName: name, Level: level, FileSize: int64(len(rows)), RowCount: int64(len(rows)),
		MinKey: []byte(rows[0].key), MaxKey: []byte(rows[len(rows)-1].key),
		MinSequenceNumber: minSeq, MaxSequenceNumber: maxSeq, DeleteRowCount: &deletes, FileSource: &src,
	}
}

func (b *memBucket) Open(f DataFileMeta, deleted *roaring.Bitmap) (RowIterator, error) {
	if f.FileName == b.failOpen {
		return nil, fmt.Errorf("injected open failure")
	}
	rows, ok := b.files[f.FileName]
	if !ok {
		return nil, fmt.Errorf("no file %s", f.FileName)
	}
	return &memIter{rows: rows, deleted: deleted, i: -1}, nil
}

// OpenRange skips nothing, as the interface allows: the merge must bound
// the rows itself.
func (b *memBucket) OpenRange(f DataFileMeta, deleted *roaring.Bitmap, _, _ []byte) (RowIterator, error) {
	return b.Open(f, deleted)
}

func (b *memBucket) ReadKeys(f DataFileMeta, deleted *roaring.Bitmap, fn func(key []byte)) error {
	it, err := b.Open(f, deleted)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		fn(it.Key())
	}
	return it.Err()
}

func (b *memBucket) FindKeys(f DataFileMeta, keys [][]byte) ([]int64, error) {
	it, err := b.Open(f, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	return findKeysByScan(it, keys)
}

// KeyFilter builds f's filter from its rows at every call: every lookup
// of the LSM tests passes through a filter.
func (b *memBucket) KeyFilter(f DataFileMeta) (*KeyFilter, error) {
	rows, ok := b.files[f.FileName]
	if !ok {
		return nil, fmt.Errorf("no file %s", f.FileName)
	}
	var kb keyFilterBuilder
	for _, r := range rows {
		kb.add([]byte(r.key))
	}
	return kb.finish(f)
}

func (b *memBucket) EncodeKey(row []byte) ([]byte, error) { return row, nil }

func (b *memBucket) int64Field(name string) (func(RowIterator) (int64, bool), error) {
	if name != "ts" {
		return nil, fmt.Errorf("no field %q", name)
	}
	return func(src RowIterator) (int64, bool) {
		it := src.(*memIter)
		if ts := it.rows[it.i].ts; ts != nil {
			return *ts, true
		}
		return 0, false
	}, nil
}

func (b *memBucket) NewWriter(level int) (RowWriter, error) {
	return &memWriter{b: b, level: int32(level)}, nil
}

type memIter struct {
	rows    []memRow
	deleted *roaring.Bitmap
	i       int
}

func (it *memIter) Next() bool {
	for it.i++; it.i < len(it.rows); it.i++ {
		if it.deleted == nil || !it.deleted.Contains(uint32(it.i)) {
			return true
		}
	}
	return false
}
func (it *memIter) Key() []byte     { return []byte(it.rows[it.i].key) }
func (it *memIter) Seq() int64      { return it.rows[it.i].seq }
func (it *memIter) Kind() ValueKind { return it.rows[it.i].kind }
func (it *memIter) Pos() int64      { return int64(it.i) }
func (it *memIter) Err() error      { return nil }
func (it *memIter) Close() error    { return nil }

type memWriter struct {
	b     *memBucket
	level int32
	cur   []memRow
	done  []DataFileMeta
}

func (w *memWriter) Write(src RowIterator) error {
	it := src.(*memIter)
	w.cur = append(w.cur, it.rows[it.i])
	if w.b.rollRows > 0 && len(w.cur) >= w.b.rollRows {
		w.flush()
	}
	return nil
}

func (w *memWriter) flush() {
	if len(w.cur) == 0 {
		return
	}
	w.b.nextID++
	name := fmt.Sprintf("out-%d", w.b.nextID)
	w.b.files[name] = w.cur
	w.done = append(w.done, memMeta(name, w.level, w.cur))
	w.cur = nil
}

func (w *memWriter) Roll() error {
	w.flush()
	return nil
}

func (w *memWriter) Finish() ([]DataFileMeta, error) {
	w.flush()
	return w.done, nil
}

func (w *memWriter) Abort() {
	for _, f := range w.done {
		delete(w.b.files, f.FileName)
	}
	w.cur, w.done = nil, nil
}

// visibleRows is what a deletion-vector batch read returns from the bucket:
// level >= 1 rows not deleted, key -> value.
func (b *memBucket) visibleRows(l *Levels, dvs DeletionVectors) map[string]string {
	out := make(map[string]string)
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			for i, r := range b.files[f.FileName] {
				if !dvs.IsDeleted(f.FileName, int64(i)) {
					out[r.key] = r.val
				}
			}
		}
	}
	return out
}

// findKeysByScan answers FindKeys by walking a file's rows: the reference
// the page-pruned lookup is checked against.
func findKeysByScan(it RowIterator, keys [][]byte) ([]int64, error) {
	out := make([]int64, len(keys))
	for i := range out {
		out[i] = -1
	}
	i := 0
	for i < len(keys) && it.Next() {
		k := it.Key()
		for i < len(keys) && string(keys[i]) < string(k) {
			i++
		}
		if i < len(keys) && string(keys[i]) == string(k) {
			out[i] = it.Pos()
			i++
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
