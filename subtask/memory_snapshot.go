package subtask

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// The memory backend's snapshot: the whole state of a store in one blob.
//
//	magic "LKMEM" version 1
//	uvarint table count, then per table in name order:
//	  string name, byte kind, uvarint primary-key column count,
//	  uvarint column count, per column string name and string type,
//	  uvarint row count, per row in key order: string key, row codec of the
//	  non-key columns
//	crc32c of everything before, 4 bytes little-endian
//
// A string is a uvarint length and the bytes.
const memMagic = "LKMEM\x01"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// snapshot serializes every table.
func (b *MemoryBackend) snapshot() []byte {
	names := make([]string, 0, len(b.tables))
	for n := range b.tables {
		names = append(names, n)
	}
	slices.Sort(names)
	out := []byte(memMagic)
	out = binary.AppendUvarint(out, uint64(len(names)))
	for _, n := range names {
		t := b.tables[n]
		out = appendString(out, n)
		out = append(out, byte(t.kind))
		out = binary.AppendUvarint(out, uint64(t.nPK))
		out = binary.AppendUvarint(out, uint64(len(t.cols)))
		for _, c := range t.cols {
			out = appendString(out, c.Name)
			out = appendString(out, c.Type.String())
		}
		types := colTypes(t.cols[t.nPK:])
		keys := make([]string, 0, len(t.rows))
		for k := range t.rows {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = binary.AppendUvarint(out, uint64(len(keys)))
		for _, k := range keys {
			out = appendString(out, k)
			out = appendRow(out, types, t.rows[k])
		}
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

func colTypes(cols []Column) []table.DataType {
	types := make([]table.DataType, len(cols))
	for i, c := range cols {
		types[i] = c.Type
	}
	return types
}

// RestoreMemory rebuilds a memory backend from a checkpoint's State. name
// names the blob in errors.
func RestoreMemory(name string, state []byte) (*MemoryBackend, error) {
	b, err := decodeMemory(state)
	if err != nil {
		return nil, fmt.Errorf("memory snapshot %s: %w", name, err)
	}
	return b, nil
}

type memReader struct {
	buf []byte
	err error
}

func (r *memReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.err = fmt.Errorf("bad %s", what)
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *memReader) count(what string) int {
	v := r.uvarint(what)
	if r.err == nil && v > uint64(len(r.buf)) {
		r.err = fmt.Errorf("%s %d exceeds the %d bytes left", what, v, len(r.buf))
		return 0
	}
	return int(v)
}

func (r *memReader) str(what string) string {
	n := r.count(what + " length")
	if r.err != nil {
		return ""
	}
	s := string(r.buf[:n])
	r.buf = r.buf[n:]
	return s
}

func decodeMemory(data []byte) (*MemoryBackend, error) {
	if len(data) < len(memMagic)+4 || string(data[:len(memMagic)]) != memMagic {
		return nil, errors.New("not a memory-backend snapshot (bad magic or version)")
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, fmt.Errorf("checksum %08x, want %08x", got, want)
	}
	return decodeMemoryBody(body[len(memMagic):])
}

// decodeMemoryBody decodes the tables of a snapshot whose magic and checksum
// were verified.
func decodeMemoryBody(body []byte) (*MemoryBackend, error) {
	r := &memReader{buf: body}
	b := NewMemory()
	nTables := r.count("table count")
	for ti := 0; ti < nTables && r.err == nil; ti++ {
		t := &memTable{rows: map[string]Row{}}
		name := r.str("table name")
		if r.err == nil && len(r.buf) == 0 {
			r.err = errors.New("table kind missing")
		}
		if r.err != nil {
			break
		}
		t.kind = Kind(r.buf[0])
		r.buf = r.buf[1:]
		t.nPK = r.count("primary-key column count")
		nCols := r.count("column count")
		for ci := 0; ci < nCols && r.err == nil; ci++ {
			cname := r.str("column name")
			ctype := r.str("column type")
			if r.err != nil {
				break
			}
			dt, err := table.ParseDataType(ctype)
			if err != nil {
				r.err = fmt.Errorf("table %q column %q: %w", name, cname, err)
				break
			}
			t.cols = append(t.cols, Column{Name: cname, Type: dt})
		}
		if r.err == nil && (t.nPK < 1 || t.nPK > len(t.cols)) {
			r.err = fmt.Errorf("table %q: %d primary-key columns of %d", name, t.nPK, len(t.cols))
		}
		if r.err != nil {
			break
		}
		if _, dup := b.tables[name]; dup {
			r.err = fmt.Errorf("table %q appears twice", name)
			break
		}
		types := colTypes(t.cols[t.nPK:])
		nRows := r.count("row count")
		prev := ""
		for ri := 0; ri < nRows && r.err == nil; ri++ {
			k := r.str("row key")
			if r.err != nil {
				break
			}
			if ri > 0 && k <= prev {
				r.err = fmt.Errorf("table %q: row %d key out of order", name, ri)
				break
			}
			prev = k
			vals, n, err := decodeRow(r.buf, types)
			if err != nil {
				r.err = fmt.Errorf("table %q row %d: %w", name, ri, err)
				break
			}
			r.buf = r.buf[n:]
			t.rows[k] = vals
		}
		b.tables[name] = t
	}
	if r.err == nil && len(r.buf) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.buf))
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}
