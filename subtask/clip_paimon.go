package subtask

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/table"
)

// clipPaimon is Clip between paimon backends. The Arrow batches of each
// source's key-group range scan go straight into a bulk load of the
// destination table: no row turns into datums. The batches are sorted runs
// (a file of a level, or a bucket's merged rows), so they are merged by key
// rather than sorted.
func (s *Store) clipPaimon(sources []*PaimonBackend, r keygroup.Range) error {
	for _, st := range s.states {
		l := st.layout()
		c := paimonClip{l: l, now: s.now}
		err := c.scanAll(sources, int32(r.Start), int32(r.End))
		if err == nil {
			err = c.commit(st.table().(*paimonTable))
		}
		c.release()
		if err != nil {
			return err
		}
	}
	return nil
}

// clipChunk is one scanned batch: its columns in table order and the rows
// that have not expired, with the encoded keys of the first and the last.
// The keys of every row are encoded only when runs need a merge.
type clipChunk struct {
	rec         arrow.Record
	cols        []arrow.Array
	rows        []int32
	first, last []byte
	keys        table.KeyBatch
}

func (ch *clipChunk) key(i int) []byte { return ch.keys.Key(int(ch.rows[i])) }

// rowKey encodes the key of one row.
func (ch *clipChunk) rowKey(types []table.DataType, row int32) ([]byte, error) {
	cols := make([]arrow.Array, len(types))
	for j := range cols {
		cols[j] = array.NewSlice(ch.cols[j], int64(row), int64(row)+1)
		defer cols[j].Release()
	}
	var kb table.KeyBatch
	if err := kb.EncodeArrow(cols, types); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return bytes.Clone(kb.Key(0)), nil
}

// paimonClip collects the surviving rows of one state's sources.
type paimonClip struct {
	l      *layout
	now    int64
	chunks []*clipChunk
	// runs are the chunk indexes of each sequence of chunks in strictly
	// ascending key order.
	runs [][]int
	rows int
}

func (c *paimonClip) scanAll(sources []*PaimonBackend, lo, hi int32) error {
	for si, src := range sources {
		t, err := src.open(c.l)
		if err != nil {
			return fmt.Errorf("clip source %d: state %q: %w", si, c.l.Name, err)
		}
		if err := c.scan(t.(*paimonTable), lo, hi); err != nil {
			return fmt.Errorf("clip source %d: state %q: %w", si, c.l.Name, err)
		}
	}
	return nil
}

// scan adds the live rows of key groups [lo, hi] of a source table.
func (c *paimonClip) scan(t *paimonTable, lo, hi int32) error {
	if t.view == nil {
		return nil
	}
	it, err := t.view.ScanKeyGroupRange(lo, hi)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	defer it.Close()
	for {
		rec, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if err := c.add(t.codec, rec); err != nil {
			return err
		}
	}
}

// add takes a batch (and its reference): it keeps the rows that have not
// expired and extends the last run when the batch continues it in key order.
func (c *paimonClip) add(codec *paimonCodec, rec arrow.Record) error {
	if err := codec.bind(rec.Schema()); err != nil {
		rec.Release()
		return err
	}
	ch := &clipChunk{rec: rec}
	c.chunks = append(c.chunks, ch) // released with the clip, kept rows or not
	for _, ci := range codec.keyIdx {
		ch.cols = append(ch.cols, rec.Column(ci))
	}
	for _, ci := range codec.valIdx {
		ch.cols = append(ch.cols, rec.Column(ci))
	}
	if _, ok := ch.cols[0].(*array.Int32); !ok {
		return fmt.Errorf("column %q is %s, not an INT", ColumnKeyGroup, ch.cols[0].DataType())
	}
	n := int(rec.NumRows())
	var ts *array.Int64
	if c.l.hasTTL() {
		var ok bool
		if ts, ok = ch.cols[len(ch.cols)-1].(*array.Int64); !ok {
			return fmt.Errorf("column %q is %s, not a BIGINT", ColumnWriteTime, ch.cols[len(ch.cols)-1].DataType())
		}
	}
	ch.rows = make([]int32, 0, n)
	for i := 0; i < n; i++ {
		if ts != nil && ts.IsValid(i) && expired(c.l, ts.Value(i), c.now) {
			continue
		}
		ch.rows = append(ch.rows, int32(i))
	}
	if len(ch.rows) == 0 {
		return nil
	}
	var err error
	if ch.first, err = ch.rowKey(c.l.pkTypes, ch.rows[0]); err != nil {
		return err
	}
	if ch.last, err = ch.rowKey(c.l.pkTypes, ch.rows[len(ch.rows)-1]); err != nil {
		return err
	}
	c.rows += len(ch.rows)
	idx := len(c.chunks) - 1
	if k := len(c.runs); k > 0 {
		run := c.runs[k-1]
		if bytes.Compare(c.chunks[run[len(run)-1]].last, ch.first) < 0 {
			c.runs[k-1] = append(run, idx)
			return nil
		}
	}
	c.runs = append(c.runs, []int{idx})
	return nil
}

func (c *paimonClip) release() {
	for _, ch := range c.chunks {
		ch.rec.Release()
	}
	c.chunks = nil
}

// commit bulk-loads the collected rows, merged by key, into the empty
// destination table with one commit; it commits nothing when no row
// survived.
func (c *paimonClip) commit(dst *paimonTable) error {
	if c.rows == 0 {
		return nil
	}
	spans, err := c.merge()
	if err != nil {
		return fmt.Errorf("clip: state %q: %w", c.l.Name, err)
	}
	load, err := dst.bulkLoad(c.now)
	if err != nil {
		return fmt.Errorf("clip: %w", err)
	}
	for bucket, spans := range c.byBucket(dst, spans) {
		if len(spans) == 0 {
			continue
		}
		rec, err := c.gather(dst.codec.schema, spans)
		if err == nil {
			err = load.write(rec, int32(bucket))
			rec.Release()
		}
		if err != nil {
			load.abort()
			return fmt.Errorf("clip: state %q: %w", c.l.Name, err)
		}
	}
	if err := load.commit(); err != nil {
		return fmt.Errorf("clip: %w", err)
	}
	return nil
}

// byBucket splits spans of rows in key order by the bucket of their key
// group, keeping the order within each bucket.
func (c *paimonClip) byBucket(dst *paimonTable, spans []rowSpan) [][]rowSpan {
	out := make([][]rowSpan, dst.b.opts.Buckets)
	if len(out) == 1 {
		out[0] = spans
		return out
	}
	buckets := map[int32]int32{}
	for _, s := range spans {
		kgs := c.chunks[s.chunk].cols[0].(*array.Int32).Int32Values()
		for from := s.from; from < s.to; {
			kg := kgs[from]
			to := from + 1
			for to < s.to && kgs[to] == kg {
				to++
			}
			b, ok := buckets[kg]
			if !ok {
				b = dst.bucketOf(kg)
				buckets[kg] = b
			}
			out[b] = append(out[b], rowSpan{chunk: s.chunk, from: from, to: to})
			from = to
		}
	}
	return out
}

// gather builds a record of the rows of spans.
func (c *paimonClip) gather(schema *arrow.Schema, spans []rowSpan) (arrow.Record, error) {
	rows := 0
	for _, s := range spans {
		rows += s.to - s.from
	}
	cols := make([]arrow.Array, len(schema.Fields()))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	in := make([]arrow.Array, len(c.chunks))
	for j, f := range schema.Fields() {
		for i, ch := range c.chunks {
			in[i] = ch.cols[j]
		}
		b := array.NewBuilder(memory.DefaultAllocator, f.Type)
		b.Reserve(rows)
		err := gatherColumn(b, in, spans)
		cols[j] = b.NewArray()
		b.Release()
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
	}
	return array.NewRecord(schema, cols, int64(rows)), nil
}

// merge orders the kept rows by key: spans of chunk rows, each span in key
// order and every span after the one before. Two rows with one key (sources
// whose key-group ranges overlap) are an error.
func (c *paimonClip) merge() ([]rowSpan, error) {
	if len(c.runs) == 1 {
		// A file holds each key once, in order, and each chunk of the run
		// starts above the one before.
		var spans []rowSpan
		for _, ci := range c.runs[0] {
			spans = appendRows(spans, ci, c.chunks[ci].rows)
		}
		return spans, nil
	}
	for _, ch := range c.chunks {
		if len(ch.rows) > 0 {
			if err := ch.keys.EncodeArrow(ch.cols[:len(c.l.pkTypes)], c.l.pkTypes); err != nil {
				return nil, fmt.Errorf("keys: %w", err)
			}
		}
	}
	h := &clipHeap{c: c}
	for _, run := range c.runs {
		h.items = append(h.items, clipCursor{run: run})
	}
	heap.Init(h)
	var spans []rowSpan
	var prev []byte
	for h.Len() > 0 {
		top := &h.items[0]
		// The top cursor's rows go out until one reaches the next cursor's key.
		var bound []byte
		if h.Len() > 1 {
			bound = h.key(1)
			if h.Len() > 2 && bytes.Compare(h.key(2), bound) < 0 {
				bound = h.key(2)
			}
		}
		for {
			ch := c.chunks[top.run[top.chunk]]
			k := ch.key(top.row)
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				return nil, errors.New("two sources hold the same key (overlapping key-group ranges)")
			}
			prev = k
			spans = appendRows(spans, top.run[top.chunk], ch.rows[top.row:top.row+1])
			if !top.next(c) {
				heap.Pop(h)
				break
			}
			if bound != nil && bytes.Compare(h.key(0), bound) >= 0 {
				heap.Fix(h, 0)
				break
			}
		}
	}
	return spans, nil
}

// appendRows appends rows of a chunk (ascending) to spans, extending the
// last span where they continue it.
func appendRows(spans []rowSpan, chunk int, rows []int32) []rowSpan {
	for _, r := range rows {
		row := int(r)
		if n := len(spans); n > 0 && spans[n-1].chunk == chunk && spans[n-1].to == row {
			spans[n-1].to++
		} else {
			spans = append(spans, rowSpan{chunk: chunk, from: row, to: row + 1})
		}
	}
	return spans
}

// clipCursor is a position in a run: chunk run[chunk], kept row row.
type clipCursor struct {
	run        []int
	chunk, row int
}

// next moves to the following kept row; false at the end of the run.
func (cur *clipCursor) next(c *paimonClip) bool {
	cur.row++
	if cur.row < len(c.chunks[cur.run[cur.chunk]].rows) {
		return true
	}
	cur.chunk, cur.row = cur.chunk+1, 0
	return cur.chunk < len(cur.run)
}

// clipHeap orders the cursors of the runs by their current key.
type clipHeap struct {
	c     *paimonClip
	items []clipCursor
}

func (h *clipHeap) key(i int) []byte {
	cur := &h.items[i]
	return h.c.chunks[cur.run[cur.chunk]].key(cur.row)
}

func (h *clipHeap) Len() int           { return len(h.items) }
func (h *clipHeap) Less(i, j int) bool { return bytes.Compare(h.key(i), h.key(j)) < 0 }
func (h *clipHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *clipHeap) Push(x any)         { h.items = append(h.items, x.(clipCursor)) }
func (h *clipHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
