package main

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/lakestate/lakestate/table"
)

// How inspect renders a value of each type, in jsonl and in table output:
//
//	BOOLEAN                  true / false
//	TINYINT .. BIGINT        a number
//	FLOAT, DOUBLE            the shortest decimal that reads back exactly
//	                         (NaN, Infinity, -Infinity as strings in jsonl)
//	STRING                   the string
//	BYTES                    standard base64 (a string in jsonl)
//	DECIMAL(p, s)            the plain decimal with exactly s fraction digits,
//	                         as a string in jsonl ("-123.45000")
//	DATE                     YYYY-MM-DD
//	TIMESTAMP(p)             ISO-8601 local date-time with exactly p fraction
//	                         digits, no zone ("2033-05-18T03:33:20.000001001")
//	null                     null in jsonl, NULL in table output

// renderValue returns the text of a non-null value and whether jsonl
// writes it as a JSON string.
func renderValue(t table.DataType, d table.Datum) (s string, quoted bool) {
	switch t.Root {
	case table.TypeBoolean:
		return strconv.FormatBool(d.Int != 0), false
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt:
		return strconv.FormatInt(d.Int, 10), false
	case table.TypeFloat, table.TypeDouble:
		bits := 64
		if t.Root == table.TypeFloat {
			bits = 32
		}
		switch {
		case math.IsNaN(d.Float):
			return "NaN", true
		case math.IsInf(d.Float, 1):
			return "Infinity", true
		case math.IsInf(d.Float, -1):
			return "-Infinity", true
		}
		return strconv.FormatFloat(d.Float, 'g', -1, bits), false
	case table.TypeString:
		return string(d.Bytes), true
	case table.TypeBytes:
		return base64.StdEncoding.EncodeToString(d.Bytes), true
	case table.TypeDecimal:
		return renderDecimal(t, d), true
	case table.TypeDate:
		return time.Unix(d.Int*86400, 0).UTC().Format(time.DateOnly), true
	case table.TypeTimestamp:
		return renderTimestamp(t.Precision, d), true
	}
	return "?", true
}

func renderDecimal(t table.DataType, d table.Datum) string {
	var unscaled big.Int
	if t.Precision <= 18 {
		unscaled.SetInt64(d.Int)
	} else {
		unscaled.SetBytes(d.Bytes)
		if len(d.Bytes) > 0 && d.Bytes[0]&0x80 != 0 { // two's complement
			var full big.Int
			full.Lsh(big.NewInt(1), uint(8*len(d.Bytes)))
			unscaled.Sub(&unscaled, &full)
		}
	}
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(&unscaled).String()
	if t.Scale > 0 {
		if len(digits) <= t.Scale {
			digits = strings.Repeat("0", t.Scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-t.Scale] + "." + digits[len(digits)-t.Scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func renderTimestamp(precision int, d table.Datum) string {
	ts := time.UnixMilli(d.Int).UTC().Add(time.Duration(d.Nanos))
	s := ts.Format("2006-01-02T15:04:05")
	if precision > 0 {
		frac := strconv.Itoa(1_000_000_000 + ts.Nanosecond())[1:]
		s += "." + frac[:min(precision, 9)]
	}
	return s
}

// appendJSON appends the jsonl form of a value.
func appendJSON(dst []byte, t table.DataType, d table.Datum) []byte {
	if d.Null {
		return append(dst, "null"...)
	}
	s, quoted := renderValue(t, d)
	if !quoted {
		return append(dst, s...)
	}
	return appendJSONString(dst, s)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// renderText is the table-output form of a value: strings that hold
// control characters are Go-quoted so a row stays on one line.
func renderText(t table.DataType, d table.Datum) string {
	if d.Null {
		return "NULL"
	}
	s, _ := renderValue(t, d)
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// appendJSONObject appends {"name":value,...} of a row's fields.
func appendJSONObject(dst []byte, fields []table.Field, row []table.Datum) []byte {
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSON(appendJSONName(dst, f.Name), f.Type, row[i])
	}
	return append(dst, '}')
}

// appendJSONName appends "name": .
func appendJSONName(dst []byte, name string) []byte {
	return append(appendJSONString(dst, name), ':')
}

// textCells renders a row's fields for table output.
func textCells(fields []table.Field, row []table.Datum) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = renderText(f.Type, row[i])
	}
	return out
}
