package subtask

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/table"
)

// paimonCodec converts between the store's encoded keys and datums and the
// Arrow records of a state table (columns typed per table.ArrowType).
type paimonCodec struct {
	l      *layout
	cols   []Column
	schema *arrow.Schema // every column
	keys   *arrow.Schema // primary-key columns
	nPK    int
	valIdx []int // result-record column of each non-key datum
	keyIdx []int // result-record column of each primary-key column

	// Reused between calls: the builder of probe records and its column
	// appenders, the columns of flush records, a slab of datums and the keys
	// of a result record.
	probe     *array.RecordBuilder
	probeCols []func(Datum)
	write     []flushColumn
	flat      Row
	keyBuf    []byte
	keyEnds   []int
	// The rows of a map flush in memory order, the sort's other buffer,
	// and where the rows' datums are (paimon_arrow_order.go).
	placed, placedTmp []placedRow
	datums            []rowDatums
	placedLen         int    // rows of the last build
	baseLine          uint64 // lines of placed rows are offsets from it
	unordered         bool   // a placed row's line is out of range
	// touched keeps the sum of the loads that touch a flush's rows ahead
	// of its build (paimon_touch.go), so that none is dropped as unused.
	touched uint64
}

// paimonSchema is the table schema of a layout: kg leads the primary key and
// is the bucket key, so a key group is one bucket and a key-group range is a
// key range.
func paimonSchema(l *layout, buckets int, deletionVectors bool) table.Schema {
	cols := l.columns()
	s := table.Schema{
		Options: map[string]string{
			table.OptionBucket:          strconv.Itoa(buckets),
			table.OptionBucketKey:       ColumnKeyGroup,
			table.OptionFileFormat:      "parquet",
			table.OptionMergeEngine:     "deduplicate",
			table.OptionDeletionVectors: strconv.FormatBool(deletionVectors),
		},
	}
	for i, c := range cols {
		s.Fields = append(s.Fields, table.Field{ID: i, Name: c.Name, Type: c.Type})
		if i < len(l.pkTypes) {
			s.PrimaryKeys = append(s.PrimaryKeys, c.Name)
		}
	}
	s.HighestFieldID = len(cols) - 1
	return s
}

func newPaimonCodec(l *layout) (*paimonCodec, error) {
	c := &paimonCodec{l: l, cols: l.columns(), nPK: len(l.pkTypes)}
	fields := make([]arrow.Field, len(c.cols))
	for i, col := range c.cols {
		at, err := table.ArrowType(col.Type)
		if err != nil {
			return nil, fmt.Errorf("state %q column %q: %w", l.Name, col.Name, err)
		}
		fields[i] = arrow.Field{Name: col.Name, Type: at, Nullable: col.Type.Nullable}
	}
	c.schema = arrow.NewSchema(fields, nil)
	c.keys = arrow.NewSchema(fields[:c.nPK], nil)
	return c, nil
}

// bind locates the columns of a result record by name.
func (c *paimonCodec) bind(s *arrow.Schema) error {
	c.keyIdx, c.valIdx = c.keyIdx[:0], c.valIdx[:0]
	for i, col := range c.cols {
		idx := s.FieldIndices(col.Name)
		if len(idx) != 1 {
			return fmt.Errorf("state %q: result has %d columns named %q", c.l.Name, len(idx), col.Name)
		}
		if i < c.nPK {
			c.keyIdx = append(c.keyIdx, idx[0])
		} else {
			c.valIdx = append(c.valIdx, idx[0])
		}
	}
	return nil
}

// keyRecord builds a record of the primary-key columns of encoded keys.
func (c *paimonCodec) keyRecord(keys []string) (arrow.Record, error) {
	if c.probe == nil {
		c.probe, c.probeCols = newRecordAppender(c.keys)
	}
	c.flat = slices.Grow(c.flat[:0], c.nPK)[:c.nPK]
	defer clear(c.flat) // keep no key alive
	reserve(c.probe, len(keys))
	for _, k := range keys {
		if err := c.l.decodePK(c.flat, k); err != nil {
			c.probe.NewRecord().Release() // drop the partial rows
			return nil, err
		}
		for j, d := range c.flat {
			c.probeCols[j](d)
		}
	}
	return c.probe.NewRecord(), nil
}

// writeRecord builds the full rows of a flush, with a tombstone's value
// columns NULL, and their value kinds. The primary-key columns are decoded
// from the encoded keys straight into their Arrow buffers; the values go row
// by row (a flush row's values sit wherever its Put left them: one visit
// each), each datum stored at its place in its column's buffers, sized for
// the flush at once.
func (c *paimonCodec) writeRecord(rows []mutation) (arrow.Record, []table.ValueKind, error) {
	if err := c.startWrite(); err != nil {
		return nil, nil, err
	}
	c.startColumns(rows)
	if err := c.writeKeys(rows); err != nil {
		return nil, nil, err
	}
	nVals := len(c.cols) - c.nPK
	vals := c.write[c.nPK:]
	kinds := make([]table.ValueKind, len(rows))
	var touched uint64
	defer func() { c.touched = touched }()
	for i := range rows {
		if i%touchBlock == 0 {
			touched += touchMutations(rows, i)
		}
		m := &rows[i]
		if m.delete {
			kinds[i] = table.KindDelete
			for j := range vals {
				vals[j].set(i, &Null)
			}
			continue
		}
		if len(m.vals) != nVals {
			return nil, nil, fmt.Errorf("state %q: flush row has %d values, table %d", c.l.Name, len(m.vals), nVals)
		}
		kinds[i] = table.KindInsert
		for j := range vals {
			vals[j].set(i, &m.vals[j])
		}
	}
	rec, err := c.finishWrite(len(rows))
	return rec, kinds, err
}

// writeMapRecord builds the record writeRecord builds of a map flush's rows,
// from the rows by reference (mapFlush.entryRows) over the keys of their
// buffer, in two passes. The first, in key order, decodes each row's key
// prefix from its key's encoding and takes from its entry where its datums
// are (a join's entry key is a slice of its row's values); the second, in
// the order of the datums in memory (paimon_arrow_order.go), sets its entry
// key and values at its place in the columns. The rows' keys are never put
// together, nor their entry keys' bytes read.
func (c *paimonCodec) writeMapRecord(rows []mapRow, keys []string) (arrow.Record, []table.ValueKind, error) {
	if err := c.startWrite(); err != nil {
		return nil, nil, err
	}
	nPrefix := c.l.prefixCols()
	keyBytes := 0
	for j := range c.write[:nPrefix] {
		if c.write[j].kind == columnBytes {
			for i := range rows {
				keyBytes += len(keys[rows[i].slot])
			}
			break
		}
	}
	for j := range c.write {
		c.write[j].start(len(rows), keyBytes, j < c.nPK, j >= nPrefix)
	}
	prefixCols, subCols, vals := c.write[:nPrefix], c.write[nPrefix:c.nPK], c.write[c.nPK:]
	nSub, nValue, withTs := len(subCols), len(c.l.Value), c.l.hasTTL()
	kinds := make([]table.ValueKind, len(rows))
	placed, datums := c.startPlaced(len(rows))
	defer c.endPlaced()
	prev, prevSlot := "", int32(-1)
	var touched uint64
	defer func() { c.touched = touched }()
	for i := range rows {
		if j := i + touchAhead; j < len(rows) {
			touched += touchMapRow(&rows[j], keys)
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
		if len(e.subRow) != nSub {
			return nil, nil, fmt.Errorf("state %q: flush row has %d entry key columns, table %d", c.l.Name, len(e.subRow), nSub)
		}
		var d rowDatums
		if nSub > 0 {
			d.sub = &e.subRow[0]
		}
		if r.delete {
			kinds[i] = table.KindDelete
			for j := range vals {
				vals[j].set(i, &Null)
			}
		} else {
			if len(e.value) != nValue {
				return nil, nil, fmt.Errorf("state %q: flush row has %d values, table %d", c.l.Name, len(e.value), nValue)
			}
			kinds[i] = table.KindInsert
			if nValue > 0 {
				d.value = &e.value[0]
			}
			if withTs {
				ts := Null
				if e.ts != noWriteTime {
					ts = Int(e.ts)
				}
				vals[nValue].set(i, &ts)
			}
		}
		first := d.sub
		if first == nil {
			first = d.value
		}
		if first != nil {
			datums[i] = d
			placed = c.place(placed, first, i)
		}
	}
	for _, p := range c.sortPlaced(placed) {
		i := p.at()
		d := &datums[i]
		if d.sub != nil {
			sub := unsafe.Slice(d.sub, nSub)
			for j := range subCols {
				if err := subCols[j].setKeyDatum(i, &sub[j]); err != nil {
					return nil, nil, fmt.Errorf("state %q: %w", c.l.Name, err)
				}
			}
		}
		if d.value != nil {
			value := unsafe.Slice(d.value, nValue)
			for j := range value {
				vals[j].set(i, &value[j])
			}
		}
	}
	for j := range c.write {
		touched += c.write[j].pack()
	}
	rec, err := c.finishWrite(len(rows))
	return rec, kinds, err
}

// startWrite makes the flush columns once.
func (c *paimonCodec) startWrite() error {
	if c.write != nil {
		return nil
	}
	for _, f := range c.schema.Fields() {
		col, err := newFlushColumn(f.Type)
		if err != nil {
			c.write = nil
			return fmt.Errorf("state %q column %q: %w", c.l.Name, f.Name, err)
		}
		c.write = append(c.write, col)
	}
	return nil
}

// finishWrite hands the flush columns of n rows to a record.
func (c *paimonCodec) finishWrite(n int) (arrow.Record, error) {
	for j := range c.write {
		if col := &c.write[j]; col.kind == columnBytes && col.end > math.MaxInt32 {
			return nil, fmt.Errorf("state %q column %q: %d bytes in one flush, Arrow strings hold at most %d", c.l.Name, c.cols[j].Name, col.end, math.MaxInt32)
		}
	}
	cols := make([]arrow.Array, len(c.write))
	for j := range c.write {
		cols[j] = c.write[j].array()
	}
	rec := array.NewRecord(c.schema, cols, int64(n))
	for _, col := range cols {
		col.Release()
	}
	return rec, nil
}

// recycle hands the buffers of the last record built back to the flush
// columns, once that record was written and released: nothing may read it
// after this.
func (c *paimonCodec) recycle() {
	for j := range c.write {
		c.write[j].recycle()
	}
}

// writeKeys decodes the encoded keys of a flush into the primary-key
// columns.
func (c *paimonCodec) writeKeys(rows []mutation) error {
	keys := c.write[:c.nPK]
	for i := range rows {
		enc := rows[i].key
		off := 0
		for j := range keys {
			n, err := keys[j].setKey(i, enc[off:])
			if err != nil {
				return fmt.Errorf("state %q: %w", c.l.Name, err)
			}
			off += n
		}
		if off != len(enc) {
			return fmt.Errorf("state %q: %d trailing bytes after the primary key", c.l.Name, len(enc)-off)
		}
	}
	return nil
}

// startColumns sizes the flush columns for rows; a key string column's bytes
// are bounded by the keys' length.
func (c *paimonCodec) startColumns(rows []mutation) {
	keyBytes := -1
	for j := range c.write {
		col := &c.write[j]
		n := 0
		if col.kind == columnBytes && j < c.nPK {
			if keyBytes < 0 {
				keyBytes = 0
				for i := range rows {
					keyBytes += len(rows[i].key)
				}
			}
			n = keyBytes
		}
		col.start(len(rows), n, j < c.nPK, false)
	}
}

// newRecordAppender returns a record builder of a schema and, per column, a
// function appending a datum to its builder with the builder's type resolved
// once. A record builder keeps its column builders across NewRecord, so the
// functions stay valid.
func newRecordAppender(s *arrow.Schema) (*array.RecordBuilder, []func(Datum)) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	fns := make([]func(Datum), len(b.Fields()))
	for j, f := range b.Fields() {
		fns[j] = appenderOf(f)
	}
	return b, fns
}

// reserve makes room for n more rows in every column.
func reserve(b *array.RecordBuilder, n int) {
	for _, f := range b.Fields() {
		f.Reserve(n)
	}
}

func appenderOf(b array.Builder) func(Datum) {
	switch b := b.(type) {
	case *array.Int8Builder:
		return appendInt(b, b.Append)
	case *array.Int16Builder:
		return appendInt(b, b.Append)
	case *array.Int32Builder:
		return appendInt(b, b.Append)
	case *array.Int64Builder:
		return appendInt(b, b.Append)
	case *array.Date32Builder:
		return appendInt(b, b.Append)
	case *array.TimestampBuilder:
		return appendInt(b, b.Append)
	case *array.StringBuilder:
		return func(d Datum) {
			if d.IsNull() {
				b.AppendNull()
			} else {
				b.Append(d.Str())
			}
		}
	case *array.BinaryBuilder:
		return func(d Datum) {
			if d.IsNull() {
				b.AppendNull()
			} else {
				b.AppendString(d.Str())
			}
		}
	}
	return func(d Datum) { appendArrow(b, d) }
}

func appendInt[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Timestamp](b array.Builder, add func(T)) func(Datum) {
	return func(d Datum) {
		if d.IsNull() {
			b.AppendNull()
		} else {
			add(T(d.Int()))
		}
	}
}

// rowFilter decides, from its encoded key, what to do with a row.
type rowFilter func(key string) rowAction

type rowAction int8

const (
	rowKeep rowAction = iota
	rowSkip           // not wanted: its values are not decoded
	rowStop           // neither this row nor any after it
)

// rows calls fn with the position, encoded key, primary-key datums (nil
// unless withPK) and non-key datums of the rows of a result record that want
// keeps (nil keeps all), until fn returns false or want says stop. It reports
// whether it stopped. The record is converted column by column into slabs of
// datums and its keys are encoded into one string, so a record costs a few
// allocations whatever its row count; the rows and keys handed to fn share
// them (a kept row keeps its record's slab alive).
func (c *paimonCodec) rows(rec arrow.Record, withPK bool, want rowFilter, fn func(i int, key string, pk, vals Row) bool) (bool, error) {
	if err := c.bind(rec.Schema()); err != nil {
		return false, err
	}
	n, nPK, nVals := int(rec.NumRows()), c.nPK, len(c.cols)-c.nPK
	if n == 0 {
		return false, nil
	}
	var pks Row
	if withPK {
		pks = make(Row, n*nPK)
	} else {
		c.flat = slices.Grow(c.flat[:0], n*nPK)[:n*nPK]
		pks = c.flat
		defer clear(pks) // keep no key alive
	}
	vals := make(Row, n*nVals)
	for j, ci := range c.keyIdx {
		col := rec.Column(ci)
		if col.NullN() > 0 {
			return false, fmt.Errorf("state %q: NULL in key column %q", c.l.Name, c.cols[j].Name)
		}
		if err := datumsOf(pks[j:], nPK, col); err != nil {
			return false, fmt.Errorf("state %q column %q: %w", c.l.Name, c.cols[j].Name, err)
		}
	}
	for j, ci := range c.valIdx {
		if err := datumsOf(vals[j:], nVals, rec.Column(ci)); err != nil {
			return false, fmt.Errorf("state %q column %q: %w", c.l.Name, c.cols[nPK+j].Name, err)
		}
	}
	c.keyBuf, c.keyEnds = c.keyBuf[:0], c.keyEnds[:0]
	for i := 0; i < n; i++ {
		for j, d := range pks[i*nPK : (i+1)*nPK] {
			c.keyBuf = appendKeyDatum(c.keyBuf, c.cols[j].Type, d)
		}
		c.keyEnds = append(c.keyEnds, len(c.keyBuf))
	}
	keys := string(c.keyBuf)
	for i, from := 0, 0; i < n; i++ {
		key := keys[from:c.keyEnds[i]]
		from = c.keyEnds[i]
		if want != nil {
			switch want(key) {
			case rowSkip:
				continue
			case rowStop:
				return true, nil
			}
		}
		var pk Row
		if withPK {
			pk = pks[i*nPK : (i+1)*nPK : (i+1)*nPK]
		}
		if !fn(i, key, pk, vals[i*nVals:(i+1)*nVals:(i+1)*nVals]) {
			return true, nil
		}
	}
	return false, nil
}

// appendArrow appends a datum to a builder of the column's Arrow type.
func appendArrow(b array.Builder, d Datum) {
	if d.IsNull() {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(d.Bool())
	case *array.Int8Builder:
		b.Append(int8(d.Int()))
	case *array.Int16Builder:
		b.Append(int16(d.Int()))
	case *array.Int32Builder:
		b.Append(int32(d.Int()))
	case *array.Int64Builder:
		b.Append(d.Int())
	case *array.Float32Builder:
		b.Append(float32(d.Float()))
	case *array.Float64Builder:
		b.Append(d.Float())
	case *array.StringBuilder:
		b.Append(d.Str())
	case *array.BinaryBuilder:
		b.AppendString(d.Str())
	case *array.Date32Builder:
		b.Append(arrow.Date32(d.Int()))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(d.Int()))
	case *array.Decimal128Builder:
		hi, lo := d.Decimal()
		b.Append(decimal128.New(hi, lo))
	default:
		panic(fmt.Sprintf("subtask: no arrow mapping for builder %T", b))
	}
}

// datumsOf converts a column into dst[0], dst[stride], ... (NULLs stay zero,
// the NULL datum). A string column is copied once, as one string that its
// datums slice.
func datumsOf(dst []Datum, stride int, col arrow.Array) error {
	n := col.Len()
	var valid func(int) bool // nil: every row valid
	if col.NullN() > 0 {
		valid = col.IsValid
	}
	switch a := col.(type) {
	case *array.Boolean:
		for i := 0; i < n; i++ {
			if valid == nil || valid(i) {
				dst[i*stride] = Bool(a.Value(i))
			}
		}
	case *array.Int8:
		intDatums(dst, stride, a.Int8Values(), valid)
	case *array.Int16:
		intDatums(dst, stride, a.Int16Values(), valid)
	case *array.Int32:
		intDatums(dst, stride, a.Int32Values(), valid)
	case *array.Int64:
		intDatums(dst, stride, a.Int64Values(), valid)
	case *array.Date32:
		intDatums(dst, stride, a.Date32Values(), valid)
	case *array.Timestamp:
		intDatums(dst, stride, a.TimestampValues(), valid)
	case *array.Float32:
		for i, v := range a.Float32Values() {
			if valid == nil || valid(i) {
				dst[i*stride] = Float(float64(v))
			}
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if valid == nil || valid(i) {
				dst[i*stride] = Float(v)
			}
		}
	case *array.String:
		stringDatums(dst, stride, string(a.ValueBytes()), a.ValueOffsets(), valid)
	case *array.Binary:
		stringDatums(dst, stride, string(a.ValueBytes()), a.ValueOffsets(), valid)
	case *array.Decimal128:
		for i := 0; i < n; i++ {
			if valid == nil || valid(i) {
				v := a.Value(i)
				dst[i*stride] = Decimal(v.HighBits(), v.LowBits())
			}
		}
	default:
		return fmt.Errorf("arrow array %T has no datum mapping", col)
	}
	return nil
}

func intDatums[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Timestamp](dst []Datum, stride int, vs []T, valid func(int) bool) {
	for i, v := range vs {
		if valid == nil || valid(i) {
			dst[i*stride] = Int(int64(v))
		}
	}
}

// stringDatums slices the datums of a string column out of its values,
// copied once into data; offs are the column's value offsets.
func stringDatums(dst []Datum, stride int, data string, offs []int32, valid func(int) bool) {
	base := offs[0]
	for i := 0; i+1 < len(offs); i++ {
		if valid == nil || valid(i) {
			dst[i*stride] = Str(data[offs[i]-base : offs[i+1]-base])
		}
	}
}

// prefixDatums decodes the leading n primary-key columns of an encoded key
// into the table package's datums (for scan bounds).
func (c *paimonCodec) prefixDatums(enc string, n int) ([]table.Datum, int, error) {
	row := make(Row, n)
	used, err := decodeKey(row, enc, c.l.pkTypes[:n])
	if err != nil {
		return nil, 0, fmt.Errorf("state %q: %w", c.l.Name, err)
	}
	out := make([]table.Datum, n)
	for i, d := range row {
		out[i] = tableDatum(c.l.pkTypes[i], d)
	}
	return out, used, nil
}

// prefixesDatums decodes key prefixes of n columns each (nothing after them)
// into the table package's datums, in two flat allocations.
func (c *paimonCodec) prefixesDatums(prefixes []string, n int) ([][]table.Datum, error) {
	c.flat = slices.Grow(c.flat[:0], n)[:n]
	flat := make([]table.Datum, len(prefixes)*n)
	out := make([][]table.Datum, len(prefixes))
	for i, p := range prefixes {
		used, err := decodeKey(c.flat, p, c.l.pkTypes[:n])
		if err == nil && used != len(p) {
			err = fmt.Errorf("%d bytes after a key prefix", len(p)-used)
		}
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", c.l.Name, err)
		}
		ds := flat[i*n : (i+1)*n : (i+1)*n]
		for k, d := range c.flat {
			ds[k] = tableDatum(c.l.pkTypes[k], d)
		}
		out[i] = ds
	}
	return out, nil
}

// tableDatum converts a datum to the table package's representation (for
// scan bounds).
func tableDatum(t table.DataType, d Datum) table.Datum {
	if d.IsNull() {
		return table.NullDatum
	}
	switch t.Root {
	case table.TypeFloat, table.TypeDouble:
		return table.FloatDatum(d.Float())
	case table.TypeString, table.TypeBytes:
		return table.BytesDatum([]byte(d.Str()))
	case table.TypeTimestamp:
		per := int64(1)
		switch {
		case t.Precision <= 3:
		case t.Precision <= 6:
			per = 1000
		default:
			per = 1_000_000
		}
		v := d.Int()
		ms, rem := v/per, v%per
		if rem < 0 {
			ms, rem = ms-1, rem+per
		}
		return table.Datum{Int: ms, Nanos: int32(rem * (1_000_000 / per))}
	case table.TypeDecimal:
		hi, lo := d.Decimal()
		if t.Precision <= 18 {
			return table.IntDatum(int64(lo))
		}
		var b [16]byte
		binary.BigEndian.PutUint64(b[:], uint64(hi))
		binary.BigEndian.PutUint64(b[8:], lo)
		i := 0
		for i < 15 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xFF && b[i+1]&0x80 != 0) {
			i++
		}
		return table.BytesDatum(b[i:])
	}
	return table.IntDatum(d.Int())
}
