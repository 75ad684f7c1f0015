package table

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// pageHeader is the part of a parquet page header the page reader uses,
// decoded from thrift's compact protocol without reflection: parquet-go's
// generic thrift decoder costs more than decoding a small page.
type pageHeader struct {
	typ          int32 // 0 data page v1, 2 dictionary page, others unsupported here
	uncompressed int32
	compressed   int32
	numValues    int32 // data page or dictionary page
	encoding     int32
	defEncoding  int32
	hasData      bool
	hasDict      bool
}

const (
	pageTypeData       = 0
	pageTypeDictionary = 2

	encodingPlain           = 0
	encodingPlainDictionary = 2
	encodingRLE             = 3
	encodingRLEDictionary   = 8
)

// compact protocol field types
const (
	ctStop     = 0
	ctTrue     = 1
	ctFalse    = 2
	ctByte     = 3
	ctI16      = 4
	ctI32      = 5
	ctI64      = 6
	ctDouble   = 7
	ctBinary   = 8
	ctList     = 9
	ctSet      = 10
	ctMap      = 11
	ctStruct   = 12
	maxNesting = 16
)

var errShortHeader = errors.New("page header truncated")

type compactReader struct {
	b   []byte
	pos int
}

func (r *compactReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errShortHeader
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *compactReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		if n == 0 {
			return 0, errShortHeader
		}
		return 0, errors.New("page header: varint overflows")
	}
	r.pos += n
	return v, nil
}

func (r *compactReader) i32() (int32, error) {
	u, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	v := int64(u>>1) ^ -int64(u&1)
	if v < -1<<31 || v > 1<<31-1 {
		return 0, fmt.Errorf("page header: %d overflows an i32", v)
	}
	return int32(v), nil
}

// field reads a field header; id is the delta-encoded or explicit field id.
func (r *compactReader) field(last int16) (id int16, typ byte, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	typ = c & 0x0F
	if typ == ctStop {
		return 0, ctStop, nil
	}
	if d := c >> 4; d != 0 {
		return last + int16(d), typ, nil
	}
	v, err := r.i32()
	if err != nil {
		return 0, 0, err
	}
	return int16(v), typ, nil
}

// skip skips a value of the given type.
func (r *compactReader) skip(typ byte, depth int) error {
	if depth > maxNesting {
		return errors.New("page header: nested too deeply")
	}
	switch typ {
	case ctTrue, ctFalse:
		return nil
	case ctByte:
		_, err := r.byte()
		return err
	case ctI16, ctI32, ctI64:
		_, err := r.uvarint()
		return err
	case ctDouble:
		if len(r.b)-r.pos < 8 {
			return errShortHeader
		}
		r.pos += 8
		return nil
	case ctBinary:
		n, err := r.uvarint()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.pos) {
			return errShortHeader
		}
		r.pos += int(n)
		return nil
	case ctList, ctSet:
		c, err := r.byte()
		if err != nil {
			return err
		}
		n, et := uint64(c>>4), c&0x0F
		if n == 15 {
			if n, err = r.uvarint(); err != nil {
				return err
			}
		}
		if n > uint64(len(r.b)-r.pos) {
			return errShortHeader // every element takes at least a byte
		}
		for range n {
			if et == ctTrue || et == ctFalse {
				if _, err := r.byte(); err != nil {
					return err
				}
				continue
			}
			if err := r.skip(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctMap:
		n, err := r.uvarint()
		if err != nil || n == 0 {
			return err
		}
		c, err := r.byte()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.pos) {
			return errShortHeader
		}
		for range n {
			if err := r.skip(c>>4, depth+1); err != nil {
				return err
			}
			if err := r.skip(c&0x0F, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctStruct:
		var last int16
		for {
			id, t, err := r.field(last)
			if err != nil {
				return err
			}
			if t == ctStop {
				return nil
			}
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
			last = id
		}
	}
	return fmt.Errorf("page header: unknown field type %d", typ)
}

// parsePageHeader decodes the page header at the start of b and returns it
// with its length in bytes.
func parsePageHeader(b []byte) (pageHeader, int, error) {
	r := compactReader{b: b}
	var h pageHeader
	var last int16
	seen := 0
	for {
		id, t, err := r.field(last)
		if err != nil {
			return h, 0, err
		}
		if t == ctStop {
			break
		}
		switch {
		case id >= 1 && id <= 3 && t == ctI32:
			v, err := r.i32()
			if err != nil {
				return h, 0, err
			}
			switch id {
			case 1:
				h.typ = v
			case 2:
				h.uncompressed = v
			case 3:
				h.compressed = v
			}
			seen |= 1 << id
		case id == 5 && t == ctStruct:
			if err := h.parseDataHeader(&r); err != nil {
				return h, 0, err
			}
			h.hasData = true
		case id == 7 && t == ctStruct:
			if err := h.parseDictHeader(&r); err != nil {
				return h, 0, err
			}
			h.hasDict = true
		default:
			if err := r.skip(t, 1); err != nil {
				return h, 0, err
			}
		}
		last = id
	}
	if seen != 0b1110 {
		return h, 0, errors.New("page header lacks its type or sizes")
	}
	if h.uncompressed < 0 || h.compressed < 0 || h.numValues < 0 {
		return h, 0, fmt.Errorf("page header: negative sizes (%d, %d, %d values)", h.uncompressed, h.compressed, h.numValues)
	}
	return h, r.pos, nil
}

func (h *pageHeader) parseDataHeader(r *compactReader) error {
	var last int16
	for {
		id, t, err := r.field(last)
		if err != nil {
			return err
		}
		if t == ctStop {
			return nil
		}
		if id >= 1 && id <= 3 && t == ctI32 {
			v, err := r.i32()
			if err != nil {
				return err
			}
			switch id {
			case 1:
				h.numValues = v
			case 2:
				h.encoding = v
			case 3:
				h.defEncoding = v
			}
		} else if err := r.skip(t, 2); err != nil {
			return err
		}
		last = id
	}
}

func (h *pageHeader) parseDictHeader(r *compactReader) error {
	var last int16
	for {
		id, t, err := r.field(last)
		if err != nil {
			return err
		}
		if t == ctStop {
			return nil
		}
		if id <= 2 && t == ctI32 {
			v, err := r.i32()
			if err != nil {
				return err
			}
			if id == 1 {
				h.numValues = v
			} else {
				h.encoding = v
			}
		} else if err := r.skip(t, 2); err != nil {
			return err
		}
		last = id
	}
}
