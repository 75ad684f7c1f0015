package table

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The partition rows of the pk-dv-parquet fixture (_PARTITION of f1=10 and f1=20).
func TestBinaryRowPartitionGolden(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{
		{10, "00000001 0000000000000000 0a00000000000000"},
		{20, "00000001 0000000000000000 1400000000000000"},
	} {
		got := EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(c.v)})
		if !bytes.Equal(got, mustHex(t, c.want)) {
			t.Errorf("f1=%d: got %x want %s", c.v, got, c.want)
		}
		d, err := DecodeBinaryRow(got, []DataType{Int()})
		if err != nil || d[0].Int != c.v {
			t.Errorf("decode f1=%d: %v %v", c.v, d, err)
		}
	}
}

// The stats rows of the rust-spec-vectors manifest: (STRING "1", INT 1).
func TestBinaryRowInlineStringGolden(t *testing.T) {
	types := []DataType{String(), Int()}
	want := mustHex(t, "00000002 0000000000000000 3100000000000081 0100000000000000")
	got := EncodeBinaryRow(types, []Datum{BytesDatum([]byte("1")), IntDatum(1)})
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x want %x", got, want)
	}
	d, err := DecodeBinaryRow(want, types)
	if err != nil || string(d[0].Bytes) != "1" || d[1].Int != 1 {
		t.Fatalf("decode: %+v %v", d, err)
	}
}

func TestBinaryRowEmpty(t *testing.T) {
	if got := EncodeBinaryRow(nil, nil); !bytes.Equal(got, EmptyBinaryRow()) {
		t.Fatalf("empty row %x", got)
	}
}

func TestBinaryRowRoundTrip(t *testing.T) {
	types := []DataType{
		Boolean(), TinyInt(), SmallInt(), Int(), BigInt(), Float(), Double(),
		String(), String(), Bytes(), Decimal(10, 2), Decimal(23, 5), Date(),
		Timestamp(3), Timestamp(9), String(), Decimal(30, 0), Timestamp(6),
	}
	vals := []Datum{
		IntDatum(1), IntDatum(-7), IntDatum(-300), IntDatum(-70000), IntDatum(-1 << 40),
		FloatDatum(1.5), FloatDatum(-2.25),
		BytesDatum([]byte("1234567")), BytesDatum([]byte("twelve bytes")), BytesDatum([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8}),
		IntDatum(-12345), BytesDatum(mustHex(t, "fd62d6d3c0bf6c2e27ae")), IntDatum(-1234),
		IntDatum(1_700_000_000_123), {Int: -2_000_000_000_000, Nanos: 999_999}, NullDatum, NullDatum, NullDatum,
	}
	enc := EncodeBinaryRow(types, vals)
	if len(enc)%8 != 4 {
		t.Fatalf("row size %d is not whole words", len(enc)-4)
	}
	got, err := DecodeBinaryRow(enc, types)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if got[i].Null != vals[i].Null || got[i].Int != vals[i].Int || got[i].Nanos != vals[i].Nanos ||
			got[i].Float != vals[i].Float || !bytes.Equal(got[i].Bytes, vals[i].Bytes) {
			t.Errorf("field %d (%s): got %+v want %+v", i, types[i], got[i], vals[i])
		}
	}
}

func TestBinaryRowRejectsBadInput(t *testing.T) {
	for _, b := range [][]byte{nil, {0, 0, 0, 2, 0}, mustHex(t, "00000001 0000000000000000 0800000010000000")} {
		if d, err := DecodeBinaryRow(b, []DataType{String()}); err == nil {
			t.Errorf("%x decoded to %v", b, d)
		}
	}
}

// FixedBucketRowKeyExtractorTest: INT a=5, b=6, c=7 and 100 buckets.
func TestBucketGoldenVectors(t *testing.T) {
	vals := []Datum{IntDatum(5), IntDatum(6), IntDatum(7)}
	for n, want := range map[int]int{1: 96, 2: 27, 3: 40} {
		types := make([]DataType, n)
		for i := range types {
			types[i] = Int()
		}
		if got := Bucket(EncodeBinaryRow(types, vals[:n]), 100); got != want {
			t.Errorf("%d key fields: bucket %d want %d", n, got, want)
		}
	}
}

// pk-dv-parquet puts f2=1 rows in bucket 0 and f2=0 rows in bucket 1 of 2.
func TestBucketMatchesFixture(t *testing.T) {
	for v, want := range map[int64]int{1: 0, 0: 1} {
		if got := Bucket(EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(v)}), 2); got != want {
			t.Errorf("f2=%d: bucket %d want %d", v, got, want)
		}
	}
}
