package runtime

import (
	"fmt"
	"math"
)

// Source is a replayable input divided into splits. The number of splits is a
// property of the input, fixed across restores and rescales; source subtask
// i of p reads every split s with s mod p = i. A split is read from an
// offset, and a reader opened at the offset a checkpoint recorded emits
// exactly the rows it would have emitted after that point.
type Source interface {
	// Schemas is the schema of each output. Every row a reader emits goes to
	// one output.
	Schemas() []Schema
	// Splits is the number of splits.
	Splits() int
	// Open returns a reader of split positioned at offset. uses[i] tells
	// how the consumers of output i use its rows.
	Open(split int, offset int64, uses []OutputUse) (SplitReader, error)
}

// OutputUse is how the consumers of one source output use its rows.
type OutputUse struct {
	Rows RowUse
	// Columns, when not nil, are the columns of the output's schema that
	// every row emitted to the output holds, in this order: the consumers
	// all start with this projection, and the reader makes it while it
	// builds the row instead of building every column for them to copy.
	// A reader must honour it. Nil means every column, in schema order.
	Columns []int
}

// RowUse is whether and how the consumers of a source output use its rows.
type RowUse uint8

const (
	// Unread: the output has no consumers, and a reader may skip building
	// its rows.
	Unread RowUse = iota
	// Kept: consumers may keep the rows; each row emitted must be one no
	// one else writes.
	Kept
	// Borrowed: every consumer reads a row only while the emit call runs
	// (each copies the columns it keeps), so a reader may build all of the
	// output's rows in the same storage.
	Borrowed
)

func (u RowUse) String() string {
	switch u {
	case Unread:
		return "unread"
	case Kept:
		return "kept"
	case Borrowed:
		return "borrowed"
	}
	return fmt.Sprintf("RowUse(%d)", uint8(u))
}

// ReadStatus is what a SplitReader.Read call leaves behind.
type ReadStatus uint8

const (
	// ReadMore: the reader may have more rows now.
	ReadMore ReadStatus = iota
	// ReadIdle: the reader has no rows now; the source polls again later.
	ReadIdle
	// ReadDone: the split is exhausted.
	ReadDone
)

// SplitReader reads one split. The source subtask's actor calls it, so Read
// must not block: a reader waiting for data returns ReadIdle.
type SplitReader interface {
	// Read emits up to max rows, each to one output. A row of a Borrowed
	// output may be written again once emit returns.
	Read(max int, emit func(output int, row Row)) (ReadStatus, error)
	// Offset is the position after the last row emitted: what a checkpoint
	// records and Open takes back.
	Offset() int64
	// Watermark asserts that no row the reader emits from now on has an event
	// time at or below it; math.MinInt64 when the split has no event time.
	Watermark() int64
}

// RowsSource replays fixed rows: split i emits Rows[i] in order, to output 0.
// It is the source of examples and tests.
type RowsSource struct {
	Schema Schema
	Rows   [][]Row
	// EventTime, if set, gives a row's event time; the watermark then trails
	// the largest time emitted by Lateness.
	EventTime func(Row) int64
	Lateness  int64
}

func (s *RowsSource) Schemas() []Schema { return []Schema{s.Schema} }
func (s *RowsSource) Splits() int       { return len(s.Rows) }

func (s *RowsSource) Open(split int, offset int64, uses []OutputUse) (SplitReader, error) {
	if split < 0 || split >= len(s.Rows) {
		return nil, fmt.Errorf("split %d of %d", split, len(s.Rows))
	}
	if offset < 0 || offset > int64(len(s.Rows[split])) {
		return nil, fmt.Errorf("split %d: offset %d outside [0, %d]", split, offset, len(s.Rows[split]))
	}
	r := &rowsReader{src: s, rows: s.Rows[split], off: int(offset), maxTime: math.MinInt64}
	if len(uses) > 0 {
		r.columns = uses[0].Columns
	}
	if s.EventTime != nil {
		for _, row := range r.rows[:r.off] {
			r.maxTime = max(r.maxTime, s.EventTime(row))
		}
	}
	return r, nil
}

type rowsReader struct {
	src     *RowsSource
	rows    []Row
	columns []int // the projection to emit, if any
	arena   rowArena
	off     int
	maxTime int64
}

func (r *rowsReader) Read(n int, emit func(int, Row)) (ReadStatus, error) {
	end := min(r.off+n, len(r.rows))
	for _, row := range r.rows[r.off:end] {
		if r.src.EventTime != nil {
			r.maxTime = max(r.maxTime, r.src.EventTime(row))
		}
		if r.columns != nil {
			out := r.arena.take(len(r.columns))
			for j, c := range r.columns {
				out[j] = row[c]
			}
			row = out
		}
		emit(0, row)
	}
	r.off = end
	if r.off == len(r.rows) {
		return ReadDone, nil
	}
	return ReadMore, nil
}

func (r *rowsReader) Offset() int64 { return int64(r.off) }

func (r *rowsReader) Watermark() int64 {
	if r.src.EventTime == nil || r.maxTime == math.MinInt64 {
		return math.MinInt64
	}
	return r.maxTime - r.src.Lateness - 1
}
