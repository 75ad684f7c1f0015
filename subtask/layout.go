package subtask

import (
	"fmt"
	"strings"

	"github.com/lakestate/lakestate/table"
)

// Kind is the shape of a state table.
type Kind int8

const (
	// KindValue keeps one row per key.
	KindValue Kind = iota + 1
	// KindList keeps an ordered list of rows per key, under PK [kg, key, ord].
	KindList
	// KindMap keeps entries per key under PK [kg, key, sub...].
	KindMap
	// KindTime keeps time-ordered rows per key under PK [kg, key, time, seq].
	KindTime
)

func (k Kind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindList:
		return "list"
	case KindMap:
		return "map"
	case KindTime:
		return "time"
	}
	return fmt.Sprintf("Kind(%d)", int8(k))
}

// Column is one typed column of a state table.
type Column struct {
	Name string
	Type table.DataType
}

// Reserved column names. Every table leads with ColumnKeyGroup; a table with a
// TTL ends with ColumnWriteTime (epoch millis of the row's last write).
const (
	ColumnKeyGroup  = "kg"
	ColumnWriteTime = "ts"
	ColumnOrd       = "ord"  // list position
	ColumnTime      = "time" // time-ordered store: event time
	ColumnSeq       = "seq"  // time-ordered store: tie breaker within a time
)

// Layout describes one state table. Key and Sub columns are part of the primary
// key and never NULL; Value columns are always nullable in the table (a
// tombstone carries NULLs there).
type Layout struct {
	// Name names the table inside its store (a directory name for paimon).
	Name string
	Kind Kind
	// Key is the operator key, after the key group.
	Key []Column
	// Sub is the entry key of a map store. List and time stores fix theirs
	// (ord; time, seq) and must leave Sub empty.
	Sub   []Column
	Value []Column
	// TTL in milliseconds; 0 keeps rows forever.
	TTL int64
}

// layout is a validated Layout with what the store derives from it.
type layout struct {
	Layout
	sub     []Column         // the entry-key columns, fixed ones included
	pkTypes []table.DataType // kg, key, sub
	// nVals is the number of non-key datums a backend stores per row: the
	// values plus the write time when a TTL is set.
	nVals int
}

func (l *layout) prefixCols() int { return 1 + len(l.Key) }

func (l *layout) hasTTL() bool { return l.TTL > 0 }

// columns lists every column of the table in order: kg, key, sub, values, ts.
func (l *layout) columns() []Column {
	cols := make([]Column, 0, len(l.pkTypes)+l.nVals)
	cols = append(cols, Column{ColumnKeyGroup, table.Int().NotNull()})
	cols = append(cols, l.Key...)
	cols = append(cols, l.sub...)
	for _, c := range l.Value {
		c.Type.Nullable = true
		cols = append(cols, c)
	}
	if l.hasTTL() {
		cols = append(cols, Column{ColumnWriteTime, table.BigInt()})
	}
	return cols
}

func newLayout(in Layout) (*layout, error) {
	l := &layout{Layout: in}
	if in.Name == "" || strings.ContainsAny(in.Name, "/\\.\x00") {
		return nil, fmt.Errorf("state %q: name must be non-empty and hold no '/', '\\' or '.'", in.Name)
	}
	switch in.Kind {
	case KindValue:
		l.sub = nil
	case KindList:
		l.sub = []Column{{ColumnOrd, table.BigInt().NotNull()}}
	case KindMap:
		if len(in.Sub) == 0 {
			return nil, fmt.Errorf("state %q: a map store needs entry-key columns", in.Name)
		}
		l.sub = in.Sub
	case KindTime:
		l.sub = []Column{{ColumnTime, table.BigInt().NotNull()}, {ColumnSeq, table.BigInt().NotNull()}}
	default:
		return nil, fmt.Errorf("state %q: unknown kind %d", in.Name, in.Kind)
	}
	if in.Kind != KindMap && len(in.Sub) != 0 {
		return nil, fmt.Errorf("state %q: a %s store fixes its entry key; Sub must be empty", in.Name, in.Kind)
	}
	if len(in.Key) == 0 {
		return nil, fmt.Errorf("state %q: no key columns", in.Name)
	}
	if in.TTL < 0 {
		return nil, fmt.Errorf("state %q: negative TTL %d", in.Name, in.TTL)
	}
	seen := map[string]bool{ColumnKeyGroup: true, ColumnWriteTime: true}
	check := func(c Column, pk bool) error {
		if c.Name == "" || strings.HasPrefix(c.Name, "_") || seen[c.Name] {
			return fmt.Errorf("state %q: column name %q is empty, reserved or repeated", in.Name, c.Name)
		}
		seen[c.Name] = true
		if _, err := table.ArrowType(c.Type); err != nil {
			return fmt.Errorf("state %q: column %q: %w", in.Name, c.Name, err)
		}
		if pk && c.Type.Nullable {
			return fmt.Errorf("state %q: key column %q must be NOT NULL", in.Name, c.Name)
		}
		return nil
	}
	for _, c := range in.Key {
		if err := check(c, true); err != nil {
			return nil, err
		}
	}
	for _, c := range l.sub {
		if err := check(c, true); err != nil {
			return nil, err
		}
	}
	for _, c := range in.Value {
		if err := check(c, false); err != nil {
			return nil, err
		}
	}
	l.pkTypes = append(l.pkTypes, table.Int().NotNull())
	for _, c := range in.Key {
		l.pkTypes = append(l.pkTypes, c.Type)
	}
	for _, c := range l.sub {
		l.pkTypes = append(l.pkTypes, c.Type)
	}
	l.nVals = len(in.Value)
	if l.hasTTL() {
		l.nVals++
	}
	return l, nil
}

// sameShape reports whether two layouts describe the same table.
func (l *layout) sameShape(o *layout) bool {
	a, b := l.columns(), o.columns()
	if l.Kind != o.Kind || len(a) != len(b) || len(l.pkTypes) != len(o.pkTypes) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
