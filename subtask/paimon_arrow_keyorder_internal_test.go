package subtask

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// The build of a map record in one pass in key order, as it was before
// the pass in memory order: kept to measure the two side by side.

// writeMapRecord builds the record writeRecord builds of a map flush's rows,
// from the rows by reference (mapFlush.entryRows) over the keys of their
// buffer. A row's key columns come from its key's encoding and its entry's
// key datums, its values from its entry, all in one visit: the entry key's
// datums sit in the row the operator put (a join's entry key is a slice of
// its row's values), where its encoded bytes would cost a visit of their
// own, and the rows' keys are never put together.
func (c *paimonCodec) writeMapRecordKeyOrder(rows []mapRow, keys []string) (arrow.Record, []table.ValueKind, error) {
	if err := c.startWrite(); err != nil {
		return nil, nil, err
	}
	nPrefix := c.l.prefixCols()
	keyBytes := 0
	for j := range c.write[:c.nPK] {
		if c.write[j].kind == columnBytes {
			for i := range rows {
				keyBytes += len(keys[rows[i].slot]) + len(rows[i].e.sub)
			}
			break
		}
	}
	for j := range c.write {
		c.write[j].start(len(rows), keyBytes, j < c.nPK, false)
	}
	prefixCols, subCols, vals := c.write[:nPrefix], c.write[nPrefix:c.nPK], c.write[c.nPK:]
	nValue, withTs := len(c.l.Value), c.l.hasTTL()
	kinds := make([]table.ValueKind, len(rows))
	prev, prevSlot := "", int32(-1)
	var touched uint64
	defer func() { c.touched = touched }()
	for i := range rows {
		if i%touchBlock == 0 {
			touched += touchMapRows(rows, keys, i)
		}
		r := &rows[i]
		prefix := keys[r.slot]
		// Rows come in key order: each key's rows together, the keys
		// ascending (a key's entries are kept sorted by its handle).
		if r.slot != prevSlot {
			if prefix <= prev {
				return nil, nil, fmt.Errorf("state %q: flush row %d: key prefix %q after %q", c.l.Name, i, prefix, prev)
			}
			prev, prevSlot = prefix, r.slot
		}
		off := 0
		for j := range prefixCols {
			n, err := prefixCols[j].setKey(i, prefix[off:])
			if err != nil {
				return nil, nil, fmt.Errorf("state %q: %w", c.l.Name, err)
			}
			off += n
		}
		if off != len(prefix) {
			return nil, nil, fmt.Errorf("state %q: %d trailing bytes after a key prefix", c.l.Name, len(prefix)-off)
		}
		e := r.e
		if len(e.subRow) != len(subCols) {
			return nil, nil, fmt.Errorf("state %q: flush row has %d entry key columns, table %d", c.l.Name, len(e.subRow), len(subCols))
		}
		for j := range subCols {
			if err := subCols[j].setKeyDatum(i, &e.subRow[j]); err != nil {
				return nil, nil, fmt.Errorf("state %q: %w", c.l.Name, err)
			}
		}
		if r.delete {
			kinds[i] = table.KindDelete
			for j := range vals {
				vals[j].set(i, &Null)
			}
			continue
		}
		if len(e.value) != nValue {
			return nil, nil, fmt.Errorf("state %q: flush row has %d values, table %d", c.l.Name, len(e.value), nValue)
		}
		kinds[i] = table.KindInsert
		for j := range e.value {
			vals[j].set(i, &e.value[j])
		}
		if withTs {
			ts := Null
			if e.ts != noWriteTime {
				ts = Int(e.ts)
			}
			vals[nValue].set(i, &ts)
		}
	}
	rec, err := c.finishWrite(len(rows))
	return rec, kinds, err
}

// touchMapRows touches, at row i, a block's first, the entries of the block
// after next, the key prefixes (in keys) and datums of the next block and
// the strings of this one.
func touchMapRows(rows []mapRow, keys []string, i int) uint64 {
	var s uint64
	from, to := touchSpan(i, len(rows), 2)
	for j := from; j < to; j++ {
		s += uint64(len(rows[j].e.value))
	}
	from, to = touchSpan(i, len(rows), 1)
	for j := from; j < to; j++ {
		if k := keys[rows[j].slot]; len(k) > 0 {
			s += uint64(k[0])
		}
		e := rows[j].e
		s += touchDatums(e.subRow) + touchDatums(e.value)
	}
	from, to = touchSpan(i, len(rows), 0)
	for j := from; j < to; j++ {
		e := rows[j].e
		s += touchStrings(e.subRow) + touchStrings(e.value)
	}
	return s
}
