package subtask

import (
	"math"
	"testing"
	"unsafe"

	"github.com/lakestate/lakestate/table"
)

// A datum is four words: rows of them are most of what state buffers and
// joins hold and copy.
func TestDatumIsFourWords(t *testing.T) {
	if n := unsafe.Sizeof(Datum{}); n != 32 {
		t.Fatalf("Datum is %d bytes, want 32", n)
	}
}

func TestDatumNullIsDistinctFromEveryValue(t *testing.T) {
	values := []Datum{Int(0), Int(-1), Bool(false), Float(0), Str(""), Bytes(nil),
		Decimal(0, 0), Decimal(-1, 0), Decimal(math.MaxInt64, math.MaxUint64), Decimal(math.MinInt64+1, 0)}
	for _, d := range values {
		if d.IsNull() || d.Equal(Null) {
			t.Errorf("%+v reads as NULL", d)
		}
	}
	if !Null.IsNull() || !(Datum{}).IsNull() || !make(Row, 1)[0].IsNull() {
		t.Fatal("the zero datum is not NULL")
	}
	if hi, lo := Null.Decimal(); hi != 0 || lo != 0 {
		t.Fatalf("NULL's decimal = (%d, %d), want (0, 0)", hi, lo)
	}
}

func TestDatumDecimalWords(t *testing.T) {
	for _, hi := range []int64{0, 1, -1, math.MaxInt64, math.MinInt64 + 1, -5_421_010_862_427_522_171} {
		d := Decimal(hi, 42)
		if gh, gl := d.Decimal(); gh != hi || gl != 42 {
			t.Errorf("Decimal(%d, 42) reads back (%d, %d)", hi, gh, gl)
		}
	}
	// A decimal that fits in the low word is the same datum as the integer.
	if !Decimal(0, 7).Equal(Int(7)) {
		t.Error("Decimal(0, 7) != Int(7)")
	}
	if DecimalFits(math.MinInt64) {
		t.Error("DecimalFits(-2^63) = true")
	}
	defer func() {
		if recover() == nil {
			t.Error("Decimal(-2^63, 0) did not panic")
		}
	}()
	Decimal(math.MinInt64, 0)
}

// Decoders reject the one high word a datum cannot hold as corrupt input.
func TestDecodersRejectUnfitDecimal(t *testing.T) {
	types := []table.DataType{table.Decimal(38, 0)}
	b := []byte{1}
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0x80) // high word -2^63, little-endian
	b = append(b, make([]byte, 8)...)
	if _, _, err := decodeRow(b, types); err == nil {
		t.Error("decodeRow accepted a decimal high word of -2^63")
	}
	key := string(make([]byte, 16)) // high word ^ sign bit = 0: -2^63
	if _, _, err := decodeKeyDatum(key, table.Decimal(38, 0)); err == nil {
		t.Error("decodeKeyDatum accepted a decimal high word of -2^63")
	}
}
