package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/subtask"
)

// Row is one record's columns. Rows are immutable once emitted: operators
// keep them in state and several consumers may hold the same row.
type Row = subtask.Row

// Datum is one column value of a row.
type Datum = subtask.Datum

// Column is a named, typed column of a stream.
type Column = subtask.Column

// Schema is the columns of every row of a stream.
type Schema []Column

// Change is the changelog kind of a record, as in Flink's RowKind.
type Change uint8

const (
	// Insert adds a row (+I).
	Insert Change = iota
	// UpdateBefore retracts the previous version of an updated row (-U).
	UpdateBefore
	// UpdateAfter adds the new version of an updated row (+U).
	UpdateAfter
	// Delete retracts a row (-D).
	Delete
)

func (c Change) String() string {
	switch c {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("Change(%d)", uint8(c))
}

// Adds reports whether the record adds its row (+I, +U) rather than
// retracting it (-U, -D).
func (c Change) Adds() bool { return c == Insert || c == UpdateAfter }

// valid reports whether c is one of the four kinds.
func (c Change) valid() bool { return c <= Delete }

// Record is one row of a stream with its changelog kind.
type Record struct {
	Kind Change
	// KeyGroup is the key group of the row under the key of the operator
	// that receives it, set by the keyed exchange; -1 when the edge is not
	// keyed.
	KeyGroup int32
	Row      Row
}
