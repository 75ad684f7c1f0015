package table

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// statsStringTruncate is Paimon's default metadata.stats-mode truncate(16):
// string value stats keep at most 16 characters.
const statsStringTruncate = 16

// colStats accumulates the min, max and null count of one column.
type colStats struct {
	t        DataType
	has      bool
	min, max Datum
	nulls    int64
}

// add folds an Arrow column (typed per ArrowType) into the stats.
func (s *colStats) add(col arrow.Array) error {
	s.nulls += int64(col.NullN())
	n := col.Len()
	if col.NullN() == n {
		return nil
	}
	switch a := col.(type) {
	case *array.Int32:
		addInts(s, a.Int32Values(), a)
	case *array.Int64:
		addInts(s, a.Int64Values(), a)
	case *array.Int8:
		addInts(s, a.Int8Values(), a)
	case *array.Int16:
		addInts(s, a.Int16Values(), a)
	case *array.Date32:
		addInts(s, a.Date32Values(), a)
	case *array.Float64:
		addFloats(s, a.Float64Values(), a)
	case *array.Float32:
		addFloats(s, a.Float32Values(), a)
	case *array.String:
		lo, hi := -1, -1
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				continue
			}
			if lo < 0 || a.Value(i) < a.Value(lo) {
				lo = i
			}
			if hi < 0 || a.Value(i) > a.Value(hi) {
				hi = i
			}
		}
		s.foldBytes([]byte(a.Value(lo)), []byte(a.Value(hi)))
	case *array.Binary:
		lo, hi := -1, -1
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				continue
			}
			if lo < 0 || bytes.Compare(a.Value(i), a.Value(lo)) < 0 {
				lo = i
			}
			if hi < 0 || bytes.Compare(a.Value(i), a.Value(hi)) > 0 {
				hi = i
			}
		}
		s.foldBytes(a.Value(lo), a.Value(hi))
	default:
		// Booleans, decimals and timestamps: compare through the key encoding.
		var lo, hi, cur []byte
		if s.has {
			lo = appendKeyDatum(nil, s.t.NotNull(), s.min)
			hi = appendKeyDatum(nil, s.t.NotNull(), s.max)
		}
		for i := 0; i < n; i++ {
			if col.IsNull(i) {
				continue
			}
			d, err := DatumOf(col, i, s.t)
			if err != nil {
				return err
			}
			cur = appendKeyDatum(cur[:0], s.t.NotNull(), d)
			if !s.has || bytes.Compare(cur, lo) < 0 {
				s.min, lo = cloneDatum(d), append(lo[:0], cur...)
			}
			if !s.has || bytes.Compare(cur, hi) > 0 {
				s.max, hi = cloneDatum(d), append(hi[:0], cur...)
			}
			s.has = true
		}
	}
	return nil
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64
}

func addInts[T integer](s *colStats, vs []T, col arrow.Array) {
	hasNulls := col.NullN() > 0
	var lo, hi T
	first := true
	for i, v := range vs {
		if hasNulls && col.IsNull(i) {
			continue
		}
		if first {
			lo, hi, first = v, v, false
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	s.foldInts(int64(lo), int64(hi))
}

func (s *colStats) foldInts(lo, hi int64) {
	if !s.has || lo < s.min.Int {
		s.min = IntDatum(lo)
	}
	if !s.has || hi > s.max.Int {
		s.max = IntDatum(hi)
	}
	s.has = true
}

func addFloats[T ~float32 | ~float64](s *colStats, vs []T, col arrow.Array) {
	hasNulls := col.NullN() > 0
	for i, v := range vs {
		if hasNulls && col.IsNull(i) {
			continue
		}
		f := float64(v)
		if !s.has || f < s.min.Float {
			s.min = FloatDatum(f)
		}
		if !s.has || f > s.max.Float {
			s.max = FloatDatum(f)
		}
		s.has = true
	}
}

// chunkStatsType reports whether the writer takes a column's stats from
// the column chunk statistics parquet-go folds from its page bounds rather
// than comparing every value a second time: strings and bytes (unsigned
// byte order), the integer types and timestamps stored as INT64 in their
// Arrow unit (precision up to 6), all in signed order as parquet's INT32
// and INT64. Floats (NaN, signed zeros), booleans, decimals and INT96
// timestamps are compared by the writer.
func chunkStatsType(t DataType) bool {
	switch t.Root {
	case TypeString, TypeBytes, TypeTinyInt, TypeSmallInt, TypeInt, TypeDate, TypeBigInt:
		return true
	case TypeTimestamp:
		return t.Precision <= 6
	}
	return false
}

// foldChunk folds the min and max of a column chunk's statistics, which
// parquet encodes PLAIN: the bytes of a string or bytes value, a
// little-endian INT32 or INT64 of an integer or a timestamp.
func (s *colStats) foldChunk(lo, hi []byte) {
	switch s.t.Root {
	case TypeString, TypeBytes:
		s.foldBytes(lo, hi)
	case TypeBigInt:
		s.foldInts(int64(binary.LittleEndian.Uint64(lo[:8])), int64(binary.LittleEndian.Uint64(hi[:8])))
	case TypeTimestamp:
		s.foldTimestamps(int64(binary.LittleEndian.Uint64(lo[:8])), int64(binary.LittleEndian.Uint64(hi[:8])))
	default:
		s.foldInts(int64(int32(binary.LittleEndian.Uint32(lo[:4]))), int64(int32(binary.LittleEndian.Uint32(hi[:4]))))
	}
}

// foldTimestamps folds timestamps given in the Arrow unit of the column's
// precision.
func (s *colStats) foldTimestamps(lo, hi int64) {
	unit := timestampUnit(s.t.Precision)
	ms, ns := splitTimestamp(lo, unit)
	if d := (Datum{Int: ms, Nanos: ns}); !s.has || timestampBefore(d, s.min) {
		s.min = d
	}
	ms, ns = splitTimestamp(hi, unit)
	if d := (Datum{Int: ms, Nanos: ns}); !s.has || timestampBefore(s.max, d) {
		s.max = d
	}
	s.has = true
}

func timestampBefore(a, b Datum) bool { return a.Int < b.Int || a.Int == b.Int && a.Nanos < b.Nanos }

func (s *colStats) foldBytes(lo, hi []byte) {
	if !s.has || bytes.Compare(lo, s.min.Bytes) < 0 {
		s.min = BytesDatum(bytes.Clone(lo))
	}
	if !s.has || bytes.Compare(hi, s.max.Bytes) > 0 {
		s.max = BytesDatum(bytes.Clone(hi))
	}
	s.has = true
}

func cloneDatum(d Datum) Datum {
	d.Bytes = bytes.Clone(d.Bytes)
	return d
}

// simpleStats serializes column stats the way Paimon's SimpleStatsConverter
// does: min and max as BinaryRows over nullable copies of the types, and a
// null count per column. truncate applies truncate(16) to strings.
func simpleStats(cols []colStats, truncate bool) SimpleStats {
	mins, maxs := NewBinaryRowWriter(len(cols)), NewBinaryRowWriter(len(cols))
	counts := make([]*int64, len(cols))
	for i := range cols {
		c := &cols[i]
		n := c.nulls
		counts[i] = &n
		lo, hi := c.min, c.max
		if !c.has {
			lo, hi = NullDatum, NullDatum
		} else if truncate && c.t.Root == TypeString {
			lo, hi = truncateMin(lo), truncateMax(hi)
		}
		mins.Set(i, c.t, lo)
		maxs.Set(i, c.t, hi)
	}
	return SimpleStats{
		MinValues:  bytes.Clone(mins.Bytes()),
		MaxValues:  bytes.Clone(maxs.Bytes()),
		NullCounts: counts,
	}
}

// truncatePoint is the byte length of the first statsStringTruncate code
// points of s, or -1 when s is no longer than that.
func truncatePoint(s []byte) int {
	at, n := 0, 0
	for at < len(s) {
		if n == statsStringTruncate {
			return at
		}
		_, size := utf8.DecodeRune(s[at:])
		at += size
		n++
	}
	return -1
}

func truncateMin(d Datum) Datum {
	if at := truncatePoint(d.Bytes); at >= 0 {
		d.Bytes = d.Bytes[:at]
	}
	return d
}

// truncateMax cuts a string to 16 code points and increments the last one
// that can be incremented, so the result still bounds the original from
// above; with none it gives null (unknown), as Paimon does.
func truncateMax(d Datum) Datum {
	at := truncatePoint(d.Bytes)
	if at < 0 {
		return d
	}
	runes := []rune(string(d.Bytes[:at]))
	for i := len(runes) - 1; i >= 0; i-- {
		r := runes[i] + 1
		if r >= 0xD800 && r <= 0xDFFF {
			r = 0xE000
		}
		if r <= utf8.MaxRune {
			runes[i] = r
			return BytesDatum([]byte(string(runes[:i+1])))
		}
	}
	return NullDatum
}
