package compaction

import (
	"slices"

	"github.com/lakestate/lakestate/table"
)

// rowExpiry is the table primitive's form of the TTL at now, or nil.
func (t *TTL) rowExpiry(nowMillis int64) *table.RowExpiry {
	if t == nil {
		return nil
	}
	return &table.RowExpiry{Field: t.Field, TTLMillis: t.Millis, NowMillis: nowMillis}
}

// fileExpired reports whether every row of f has expired at now, from the
// file's value statistics alone: no null write time (null never expires)
// and the largest write time expired. Missing or unreadable statistics, or
// a file of another schema, keep the file.
func (t *TTL) fileExpired(s *table.Schema, f table.DataFileMeta, nowMillis int64) bool {
	if t == nil || f.SchemaID != s.ID || f.RowCount == 0 {
		return false
	}
	field := s.FieldIndex(t.Field)
	if field < 0 || s.Fields[field].Type.Root != table.TypeBigInt {
		return false
	}
	idx := field
	if f.ValueStatsCols != nil || f.HasValueStatsCols {
		idx = slices.Index(f.ValueStatsCols, t.Field)
		if idx < 0 {
			return false
		}
	}
	st := f.ValueStats
	if idx >= len(st.NullCounts) || st.NullCounts[idx] == nil || *st.NullCounts[idx] != 0 {
		return false
	}
	row, err := table.ParseBinaryRow(st.MaxValues)
	if err != nil || idx >= row.Arity() || row.IsNull(idx) {
		return false
	}
	d, err := row.Datum(idx, s.Fields[field].Type)
	if err != nil {
		return false
	}
	return d.Int <= t.expiredAt(nowMillis)
}

// expiredFiles lists the level >= 1 files of a tree whose rows have all
// expired. Level 0 is left alone: its files are not yet visible, and their
// keys still have to supersede the older versions below.
func (t *TTL) expiredFiles(s *table.Schema, l *table.Levels, nowMillis int64) []table.DataFileMeta {
	if t == nil {
		return nil
	}
	var out []table.DataFileMeta
	for lv := 1; lv <= l.MaxLevel(); lv++ {
		for _, f := range l.RunOfLevel(lv).Files {
			if t.fileExpired(s, f, nowMillis) {
				out = append(out, f)
			}
		}
	}
	return out
}
