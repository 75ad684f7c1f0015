package main

import (
	"math"
	"testing"
	"time"

	"github.com/lakestate/lakestate/table"
)

func TestRenderValues(t *testing.T) {
	millis := func(s string) int64 { return mustTime(t, s) }
	tests := []struct {
		name string
		t    table.DataType
		d    table.Datum
		json string
		text string
	}{
		{"null", table.Int(), table.NullDatum, `null`, `NULL`},
		{"bool", table.Boolean(), table.IntDatum(1), `true`, `true`},
		{"int", table.Int(), table.IntDatum(-42), `-42`, `-42`},
		{"bigint", table.BigInt(), table.IntDatum(math.MaxInt64), `9223372036854775807`, `9223372036854775807`},
		{"double", table.Double(), table.FloatDatum(19.1), `19.1`, `19.1`},
		{"whole double", table.Double(), table.FloatDatum(11), `11`, `11`},
		{"float", table.Float(), table.FloatDatum(float64(float32(0.1))), `0.1`, `0.1`},
		{"nan", table.Double(), table.FloatDatum(math.NaN()), `"NaN"`, `NaN`},
		{"-inf", table.Double(), table.FloatDatum(math.Inf(-1)), `"-Infinity"`, `-Infinity`},
		{"string", table.String(), table.BytesDatum([]byte(`say "hi"`)), `"say \"hi\""`, `say "hi"`},
		{"string with newline", table.String(), table.BytesDatum([]byte("a\nb")), `"a\nb"`, `"a\nb"`},
		{"bytes", table.Bytes(), table.BytesDatum([]byte("add")), `"YWRk"`, `YWRk`},
		{"compact decimal", table.Decimal(10, 5), table.IntDatum(-12345000), `"-123.45000"`, `-123.45000`},
		{"small decimal", table.Decimal(10, 5), table.IntDatum(5), `"0.00005"`, `0.00005`},
		{"zero scale", table.Decimal(10, 0), table.IntDatum(7), `"7"`, `7`},
		// 12345678998765432145678 as minimal big-endian two's complement.
		{"wide decimal", table.Decimal(23, 5), table.BytesDatum([]byte{0x02, 0x9d, 0x42, 0xb6, 0xa7, 0x2a, 0x9d, 0xc7, 0x07, 0x0e}), `"123456789987654321.45678"`, `123456789987654321.45678`},
		{"negative wide decimal", table.Decimal(23, 5), table.BytesDatum([]byte{0xfd, 0x62, 0xbd, 0x49, 0x58, 0xd5, 0x62, 0x38, 0xf8, 0xf2}), `"-123456789987654321.45678"`, `-123456789987654321.45678`},
		{"date", table.Date(), table.IntDatum(1234), `"1973-05-19"`, `1973-05-19`},
		{"negative date", table.Date(), table.IntDatum(-100), `"1969-09-23"`, `1969-09-23`},
		{"timestamp(9)", table.Timestamp(9), table.Datum{Int: millis("2033-05-18T03:33:20Z"), Nanos: 1001}, `"2033-05-18T03:33:20.000001001"`, `2033-05-18T03:33:20.000001001`},
		{"timestamp(3)", table.Timestamp(3), table.Datum{Int: millis("2024-10-10T10:10:10.1Z")}, `"2024-10-10T10:10:10.100"`, `2024-10-10T10:10:10.100`},
		{"timestamp(0)", table.Timestamp(0), table.Datum{Int: millis("1899-01-01T00:59:20Z")}, `"1899-01-01T00:59:20"`, `1899-01-01T00:59:20`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendJSON(nil, tt.t, tt.d)); got != tt.json {
				t.Errorf("json = %s, want %s", got, tt.json)
			}
			if got := renderText(tt.t, tt.d); got != tt.text {
				t.Errorf("text = %s, want %s", got, tt.text)
			}
		})
	}
}

func mustTime(t *testing.T, s string) int64 {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UnixMilli()
}
