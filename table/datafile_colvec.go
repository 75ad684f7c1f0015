package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
)

// colVec is a run of decoded rows of one column, already in the Arrow layout
// of the column's Paimon type, so turning it into an Arrow array copies
// nothing. Fixed-width values live in fixed (width bytes each), strings and
// bytes in offs/data, booleans in bits. valid is a validity bitmap, nil when
// every row is valid.
type colVec struct {
	t     DataType
	width int // bytes per value, 0 for strings/bytes and booleans
	n     int
	fixed []byte
	offs  []int32
	data  []byte
	bits  []byte
	valid []byte
	nulls int
}

func newColVec(t DataType) *colVec {
	v := &colVec{t: t}
	v.width = arrowWidth(t)
	v.reset()
	return v
}

func arrowWidth(t DataType) int {
	switch t.Root {
	case TypeTinyInt:
		return 1
	case TypeSmallInt:
		return 2
	case TypeInt, TypeDate, TypeFloat:
		return 4
	case TypeBigInt, TypeDouble, TypeTimestamp:
		return 8
	case TypeDecimal:
		return 16
	}
	return 0
}

func (v *colVec) isVar() bool { return v.t.Root == TypeString || v.t.Root == TypeBytes }

func (v *colVec) reset() {
	v.n, v.nulls = 0, 0
	v.fixed, v.data, v.bits, v.valid = v.fixed[:0], v.data[:0], v.bits[:0], v.valid[:0]
	v.offs = append(v.offs[:0], 0)
}

// appendNull appends a null row.
func (v *colVec) appendNull() {
	v.markValidity(false)
	v.appendZero()
}

func (v *colVec) appendZero() {
	switch {
	case v.isVar():
		v.offs = append(v.offs, int32(len(v.data)))
	case v.t.Root == TypeBoolean:
		v.setBit(&v.bits, v.n, false)
	default:
		v.fixed = append(v.fixed, make([]byte, v.width)...)
	}
	v.n++
}

// markValidity records row v.n's validity; the bitmap is materialized at
// the first null.
func (v *colVec) markValidity(ok bool) {
	if ok && v.nulls == 0 {
		return
	}
	if !ok && v.nulls == 0 {
		v.valid = v.valid[:0]
		for i := 0; i < v.n; i++ {
			v.setBit(&v.valid, i, true)
		}
	}
	if !ok {
		v.nulls++
	}
	v.setBit(&v.valid, v.n, ok)
}

func (v *colVec) setBit(bm *[]byte, i int, on bool) {
	for len(*bm) <= i/8 {
		*bm = append(*bm, 0)
	}
	if on {
		(*bm)[i/8] |= 1 << (i % 8)
	} else {
		(*bm)[i/8] &^= 1 << (i % 8)
	}
}

// appendPage decodes every row of a parquet page (plain or dictionary encoded,
// required or optional) onto v.
func (v *colVec) appendPage(p parquet.Page, kind parquet.Kind, maxDef byte) error {
	rows := int(p.NumRows())
	var defs []byte
	if maxDef > 0 {
		defs = p.DefinitionLevels()
		if len(defs) != rows {
			return fmt.Errorf("page has %d rows but %d definition levels", rows, len(defs))
		}
	}
	if v.t.Root == TypeBoolean {
		return v.appendGeneric(p, rows, maxDef)
	}
	src := pageValues{kind: kind}
	if err := src.load(p); err != nil {
		return err
	}
	return v.appendDecoded(rows, defs, maxDef, &src)
}

// appendDecoded appends rows rows of a page: defs are their definition
// levels (nil when none is null) and src holds the non-null values.
func (v *colVec) appendDecoded(rows int, defs []byte, maxDef byte, src *pageValues) error {
	if defs == nil {
		if src.n != rows {
			return fmt.Errorf("page has %d rows but %d values", rows, src.n)
		}
		if v.nulls > 0 {
			for i := 0; i < rows; i++ {
				v.setBit(&v.valid, v.n+i, true)
			}
		}
		return v.appendValues(src, 0, rows)
	}
	k := 0
	for i := 0; i < rows; {
		if defs[i] != maxDef {
			v.appendNull()
			i++
			continue
		}
		j := i
		for j < rows && defs[j] == maxDef {
			j++
		}
		if k+(j-i) > src.n {
			return fmt.Errorf("page has more non-null rows than its %d values", src.n)
		}
		if v.nulls > 0 {
			for r := i; r < j; r++ {
				v.setBit(&v.valid, v.n+r-i, true)
			}
		}
		if err := v.appendValues(src, k, k+(j-i)); err != nil {
			return err
		}
		k += j - i
		i = j
	}
	return nil
}

// appendGeneric decodes through parquet.Value, for booleans.
func (v *colVec) appendGeneric(p parquet.Page, rows int, maxDef byte) error {
	buf := make([]parquet.Value, 256)
	r := p.Values()
	for read := 0; read < rows; {
		n, err := r.ReadValues(buf)
		for _, x := range buf[:n] {
			if x.IsNull() || x.DefinitionLevel() != int(maxDef) {
				v.appendNull()
				continue
			}
			v.markValidity(true)
			v.setBit(&v.bits, v.n, x.Boolean())
			v.n++
		}
		read += n
		if err != nil {
			if read >= rows {
				break
			}
			return err
		}
		if n == 0 {
			return fmt.Errorf("page ended after %d of %d rows", read, rows)
		}
	}
	return nil
}

// pageValues are a page's non-null values in physical form, with dictionary
// indexes resolved lazily through dict.
type pageValues struct {
	kind parquet.Kind
	n    int
	idx  []int32 // dictionary indexes, nil for plain pages
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	i96  []deprecated.Int96
	data []byte
	offs []uint32
	// prefixed byte arrays keep PLAIN's 4-byte length before each value:
	// value j is data[offs[j]+4:offs[j+1]].
	prefixed bool
	fixed    int // FIXED_LEN_BYTE_ARRAY width
}

func (s *pageValues) load(p parquet.Page) error {
	vals := p.Data()
	if d := p.Dictionary(); d != nil {
		s.idx = vals.Int32()
		s.n = len(s.idx)
		vals = d.Page().Data()
		if err := s.loadValues(&vals, d.Len()); err != nil {
			return err
		}
		for _, x := range s.idx {
			if x < 0 || int(x) >= d.Len() {
				return fmt.Errorf("dictionary index %d out of %d entries", x, d.Len())
			}
		}
		return nil
	}
	return s.loadValues(&vals, -1)
}

func (s *pageValues) loadValues(vals *encoding.Values, dictLen int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("page values of an unexpected kind: %v", r)
		}
	}()
	n := 0
	switch s.kind {
	case parquet.Int32:
		s.i32 = vals.Int32()
		n = len(s.i32)
	case parquet.Int64:
		s.i64 = vals.Int64()
		n = len(s.i64)
	case parquet.Float:
		s.f32 = vals.Float()
		n = len(s.f32)
	case parquet.Double:
		s.f64 = vals.Double()
		n = len(s.f64)
	case parquet.ByteArray:
		s.data, s.offs = vals.ByteArray()
		n = len(s.offs) - 1
	case parquet.FixedLenByteArray:
		s.data, s.fixed = vals.FixedLenByteArray()
		if s.fixed <= 0 || s.fixed > 16 {
			return fmt.Errorf("fixed-length values of %d bytes", s.fixed)
		}
		n = len(s.data) / s.fixed
	case parquet.Int96:
		s.i96 = vals.Int96()
		n = len(s.i96)
	default:
		return fmt.Errorf("physical type %s", s.kind)
	}
	if s.idx == nil {
		s.n = n
	} else if n < dictLen {
		return fmt.Errorf("dictionary holds %d of %d values", n, dictLen)
	}
	return nil
}

// at maps value k to its physical position (through the dictionary).
func (s *pageValues) at(k int) int {
	if s.idx != nil {
		return int(s.idx[k])
	}
	return k
}

// appendValues converts values [lo,hi) to the Arrow layout of v.t.
func (v *colVec) appendValues(s *pageValues, lo, hi int) error {
	t := v.t
	n := hi - lo
	switch {
	case v.isVar():
		if s.kind != parquet.ByteArray {
			return fmt.Errorf("%s column stored as %s", t, s.kind)
		}
		for k := lo; k < hi; k++ {
			j := s.at(k)
			a, b := s.offs[j], s.offs[j+1]
			if s.prefixed {
				a += 4
			}
			if a > b || int(b) > len(s.data) {
				return fmt.Errorf("byte array offsets [%d,%d) beyond %d bytes", a, b, len(s.data))
			}
			v.data = append(v.data, s.data[a:b]...)
			v.offs = append(v.offs, int32(len(v.data)))
		}
	case s.kind == parquet.Int32 && (t.Root == TypeInt || t.Root == TypeDate) && s.idx == nil:
		v.fixed = append(v.fixed, asBytes(s.i32[lo:hi])...)
	case s.kind == parquet.Int64 && (t.Root == TypeBigInt || t.Root == TypeTimestamp) && s.idx == nil:
		v.fixed = append(v.fixed, asBytes(s.i64[lo:hi])...)
	case s.kind == parquet.Double && t.Root == TypeDouble && s.idx == nil:
		v.fixed = append(v.fixed, asBytes(s.f64[lo:hi])...)
	default:
		for k := lo; k < hi; k++ {
			if err := v.appendOne(s, s.at(k)); err != nil {
				return err
			}
		}
		v.n += n
		return nil
	}
	v.n += n
	return nil
}

func (v *colVec) appendOne(s *pageValues, j int) error {
	var b [16]byte
	t := v.t
	switch s.kind {
	case parquet.Int32:
		x := s.i32[j]
		if t.Root == TypeDecimal {
			putDecimal128(b[:], int64(x)>>63, uint64(int64(x)))
		} else {
			binary.LittleEndian.PutUint32(b[:], uint32(x))
		}
	case parquet.Int64:
		x := s.i64[j]
		if t.Root == TypeDecimal {
			putDecimal128(b[:], x>>63, uint64(x))
		} else {
			binary.LittleEndian.PutUint64(b[:], uint64(x))
		}
	case parquet.Float:
		if t.Root == TypeDouble {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(float64(s.f32[j])))
		} else {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(s.f32[j]))
		}
	case parquet.Double:
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(s.f64[j]))
	case parquet.Int96:
		x := s.i96[j]
		nod := int64(uint64(x[1])<<32 | uint64(x[0]))
		ns := (int64(x[2])-julianDayOfEpoch)*nanosPerDay + nod
		binary.LittleEndian.PutUint64(b[:], uint64(ns))
	case parquet.FixedLenByteArray:
		if t.Root != TypeDecimal {
			return fmt.Errorf("%s column stored as fixed-length bytes", t)
		}
		be := s.data[j*s.fixed : (j+1)*s.fixed]
		var w [16]byte
		if be[0]&0x80 != 0 {
			for i := range w {
				w[i] = 0xFF
			}
		}
		copy(w[16-len(be):], be)
		putDecimal128(b[:], int64(binary.BigEndian.Uint64(w[:])), binary.BigEndian.Uint64(w[8:]))
	default:
		return fmt.Errorf("%s column stored as %s", t, s.kind)
	}
	if v.width == 0 {
		return fmt.Errorf("%s column stored as %s", t, s.kind)
	}
	v.fixed = append(v.fixed, b[:v.width]...)
	return nil
}

func putDecimal128(b []byte, hi int64, lo uint64) {
	binary.LittleEndian.PutUint64(b, lo)
	binary.LittleEndian.PutUint64(b[8:], uint64(hi))
}

func asBytes[T int32 | int64 | float32 | float64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// gather appends rows sel of src (same type) to v.
func (v *colVec) gather(src *colVec, sel []int32) {
	for _, r := range sel {
		v.appendRow(src, int(r))
	}
}

// appendRow appends row i of src (same type) to v.
func (v *colVec) appendRow(src *colVec, i int) {
	if src.nulls > 0 && !bitutil.BitIsSet(src.valid, i) {
		v.appendNull()
		return
	}
	v.markValidity(true)
	switch {
	case v.isVar():
		v.data = append(v.data, src.data[src.offs[i]:src.offs[i+1]]...)
		v.offs = append(v.offs, int32(len(v.data)))
	case v.t.Root == TypeBoolean:
		v.setBit(&v.bits, v.n, bitutil.BitIsSet(src.bits, i))
	default:
		v.fixed = append(v.fixed, src.fixed[i*v.width:(i+1)*v.width]...)
	}
	v.n++
}

// appendRange appends rows [lo,hi) of src (same type) to v.
func (v *colVec) appendRange(src *colVec, lo, hi int) {
	if src.nulls > 0 || v.nulls > 0 || v.t.Root == TypeBoolean {
		sel := make([]int32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			sel = append(sel, int32(i))
		}
		v.gather(src, sel)
		return
	}
	if v.isVar() {
		base := int32(len(v.data)) - src.offs[lo]
		v.data = append(v.data, src.data[src.offs[lo]:src.offs[hi]]...)
		for i := lo + 1; i <= hi; i++ {
			v.offs = append(v.offs, src.offs[i]+base)
		}
	} else {
		v.fixed = append(v.fixed, src.fixed[lo*v.width:hi*v.width]...)
	}
	v.n += hi - lo
}

// arrow wraps v as an Arrow array of the Arrow type of v.t without copying;
// v must not be reused while the array lives.
func (v *colVec) arrow() (arrow.Array, error) {
	at, err := ArrowType(v.t)
	if err != nil {
		return nil, err
	}
	var validity *memory.Buffer
	if v.nulls > 0 {
		validity = memory.NewBufferBytes(v.valid)
	}
	var bufs []*memory.Buffer
	switch {
	case v.isVar():
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(asBytesI32(v.offs)), memory.NewBufferBytes(v.data)}
	case v.t.Root == TypeBoolean:
		bits := v.bits
		for len(bits) < (v.n+7)/8 {
			bits = append(bits, 0)
		}
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(bits)}
	default:
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(v.fixed)}
	}
	data := array.NewData(at, v.n, bufs, nil, v.nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

func asBytesI32(s []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

// vecOfArrow views an Arrow array of the Arrow type of t as a colVec without
// copying; ok is false for arrays it cannot view (sliced ones).
func vecOfArrow(a arrow.Array, t DataType) (*colVec, bool) {
	d := a.Data()
	if d.Offset() != 0 {
		return nil, false
	}
	want, err := ArrowType(t)
	if err != nil || !arrow.TypeEqual(want, a.DataType()) {
		return nil, false
	}
	bufs := d.Buffers()
	v := &colVec{t: t, width: arrowWidth(t), n: a.Len(), nulls: a.NullN()}
	if v.nulls > 0 {
		v.valid = bufs[0].Bytes()
	}
	switch {
	case v.isVar():
		raw := bufs[1].Bytes()
		v.offs = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(raw))), v.n+1)
		if len(bufs) > 2 && bufs[2] != nil {
			v.data = bufs[2].Bytes()
		}
	case t.Root == TypeBoolean:
		v.bits = bufs[1].Bytes()
	default:
		v.fixed = bufs[1].Bytes()
	}
	return v, true
}
