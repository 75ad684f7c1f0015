package subtask

import (
	"fmt"
	"strings"
)

// Backend keeps the committed state tables of one store. The store talks to it
// in encoded keys (see [Layout.AppendKey]) and non-key datums; what a backend
// makes of a commit (a Paimon snapshot, a serialized blob, a Pebble
// checkpoint) is in the [Checkpoint] it returns.
//
// The interface is sealed: the backends are this package's memory, paimon
// and pebble backends.
type Backend interface {
	// open returns the committed table of a layout, creating an empty one when
	// the backend has none. A table that exists with another shape is an error.
	open(l *layout) (committedTable, error)
	// commit applies every table's mutations as one step. With checkpoint set
	// the backend also produces its checkpoint artifacts.
	commit(c commitRequest) (Checkpoint, error)
	// repin makes reads see the newest committed state (a Paimon maintenance
	// round commits snapshots the store did not write).
	repin() error
	// Close releases the backend's resources.
	Close() error
}

// committedTable reads one committed table. Rows handed out are immutable and
// may be kept by the caller; Vals holds the layout's value datums followed by
// the write time when the layout has a TTL.
type committedTable interface {
	// get calls found for every key of keys (sorted, distinct, full primary
	// keys) that the table holds.
	get(keys []string, found func(i int, vals Row)) error
	// scanPrefixes calls fn, for every prefix (sorted, distinct) in order, with
	// every row whose key starts with it, in key order.
	scanPrefixes(prefixes []string, fn func(i int, e entry)) error
	// scan calls fn for the rows with from <= key < to (to == "": no upper
	// bound) in key order until fn returns false.
	scan(from, to string, fn func(e entry) bool) error
	// mayHold reports whether the table may hold a key starting with p (a
	// full key or a prefix of whole key columns); false is certain.
	mayHold(p string) bool
}

// entry is one committed row: its encoded primary key and its non-key datums.
// A backend that reads typed columns (paimon) also hands out the primary-key
// datums, sparing the reader a decode of key; others leave pk nil.
type entry struct {
	key  string
	pk   Row
	vals Row
}

// mutation is one row of a commit: an upsert of vals, or a tombstone.
type mutation struct {
	key    string
	vals   Row
	delete bool
}

// tableWrite is the mutations of one table, sorted by key with at most one
// per key.
type tableWrite struct {
	layout *layout
	table  committedTable
	rows   []mutation
}

type commitRequest struct {
	id         int64 // checkpoint id (or the last one, for a spill)
	nowMillis  int64
	checkpoint bool
	writes     []tableWrite
}

// Checkpoint is what a flush leaves for the rest of a checkpoint's sync phase.
type Checkpoint struct {
	ID     int64
	Tables []TableCheckpoint // in registration order
	// State is the whole serialized state of the store (memory backend).
	State []byte
	// Dir holds the checkpoint's files (pebble: a hard-link checkpoint of the
	// database), for the uploader.
	Dir string
}

// TableCheckpoint is one table's part of a flush.
type TableCheckpoint struct {
	Name string
	// Snapshot is the Paimon snapshot the table is at after the flush, 0 when it
	// never committed (paimon backend only).
	Snapshot int64
	// Committed reports whether this flush committed rows to the table.
	Committed bool
	// Upserts and Tombstones count the rows the flush wrote.
	Upserts, Tombstones int
}

// checkSorted asserts the commit contract: keys strictly increasing.
func checkSorted(name string, rows []mutation) {
	for i := 1; i < len(rows); i++ {
		if strings.Compare(rows[i-1].key, rows[i].key) >= 0 {
			panic(fmt.Sprintf("subtask: state %q: flush rows not strictly sorted at %d", name, i))
		}
	}
}

func tableCheckpoint(w tableWrite) TableCheckpoint {
	tc := TableCheckpoint{Name: w.layout.Name, Committed: len(w.rows) > 0}
	for _, m := range w.rows {
		if m.delete {
			tc.Tombstones++
		} else {
			tc.Upserts++
		}
	}
	return tc
}
